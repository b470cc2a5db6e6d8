"""One cell of a turn: a policy may refuse it; else it runs, and its observation joins the
conversation with the policies' notes (`CaveAgent`'s loop calls `run_cell_step`)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any, Protocol

from cave_tui.agent import events as ev
from cave_tui.agent.cells import CellAuthor, cell_event, run_cell
from cave_tui.agent.conversation import Conversation
from cave_tui.agent.events import InterventionKind
from cave_tui.agent.extensions import Extensions
from cave_tui.agent.final_answer import (
    DEFINE_CODE,
    FINAL_NAME,
    AcceptedAnswer,
    MarkedAnswerFilter,
    take_final_answer,
)
from cave_tui.agent.observation import shape_result
from cave_tui.agent.persisted_output import PersistedOutputs
from cave_tui.agent.policies import Intervention, PolicyPipeline
from cave_tui.agent.turn import Answer, CellRecord, Turn
from cave_tui.models.base import Message
from cave_tui.runtime.base import ExecutionResult, Runtime
from cave_tui.runtime.errors import RuntimeExecutionError, RuntimeFailure


class StepAgent(Protocol):
    """What a cell step uses of its agent (`CaveAgent`)."""

    runtime: Runtime
    conversation: Conversation
    extensions: Extensions
    final_answer: bool
    max_exec_output: int
    persisted_outputs: PersistedOutputs
    max_exec_timeout: float | None
    in_cell: bool  # set here: True while the cell runs
    _pipeline: PolicyPipeline
    _stop_requested: threading.Event


async def run_cell_step(
    agent: StepAgent, turn: Turn, step: int, code: str, reply: Message
) -> AsyncIterator[ev.Event | Intervention | AcceptedAnswer]:
    """Run one cell unless a policy refuses it: its events and notes, then
    `AcceptedAnswer` when it called final_answer(), succeeded and was not doubted."""
    refusal = await agent._pipeline.before_cell(turn, code)
    rewritten: Intervention | None = None
    if refusal is not None and refusal.kind is InterventionKind.REWRITE:
        rewritten, code = refusal, refusal.code
        refusal = None
        yield rewritten  # before the cell's output: the user sees what ran
    if refusal is not None:
        turn.refuse(
            code,
            step,
            refusal.text,
            refusal.retract,
            rewound=refusal.kind is InterventionKind.REWIND,
        )
        turn.resample += refusal.resample
        yield refusal
        return
    turn.resample = 0
    if agent.final_answer and FINAL_NAME in code:
        await agent.runtime.execute(DEFINE_CODE)  # (re)defined here: see final_answer.py
    result: ExecutionResult | None = None
    agent.in_cell = True  # before the check: `stop_turn()`'s caller reads it after setting
    try:
        if agent._stop_requested.is_set():
            return  # stopped before the cell started: the turn ends without it
        marks = MarkedAnswerFilter() if agent.final_answer else None
        # Events of sub-agents driven by this cell arrive while it runs.
        cell_run = run_cell(
            agent.runtime,
            code,
            author=CellAuthor.AGENT,
            timeout=agent.max_exec_timeout,
            step=step,
            add_on=agent.extensions.subagents,
        )
        async for item in cell_run:
            if isinstance(item, ExecutionResult):
                result = item
            elif marks is not None and isinstance(item, ev.OutputEvent) and _own_output(item):
                item.content = marks.feed(item.content)  # the answer is shown apart
                if item.content or item.dropped:
                    yield item
            else:
                yield item
    except asyncio.CancelledError:
        agent.conversation.note_cell_interrupted()
        raise
    except RuntimeExecutionError as exc:  # the runtime says it cannot run cells: the run ends
        agent.conversation.add_observation(f"The runtime failed: {type(exc).__name__}: {exc}")
        raise
    except (RuntimeFailure, OSError) as exc:  # the kernel could not start, died, ...: the
        # model is told; any other exception is a defect (0.8's INTERNAL_ERROR, raised)
        error = f"{type(exc).__name__}: {exc}"
        result = ExecutionResult(success=False, error=error, error_type=type(exc).__name__)
    finally:
        agent.in_cell = False
    assert result is not None
    given = take_final_answer(result) if agent.final_answer else None
    appendix = "".join(hook(result) for hook in agent.extensions.result_hooks)  # may take output
    cell = CellRecord(code, result, step, messages=[reply])
    turn.record(cell)
    notes = await agent._pipeline.after_cell(turn, cell)
    hints = [n.text for n in notes if n.kind is InterventionKind.HINT]
    marker, kept_as = await keep_long_output(agent, result)
    observation = shape_result(result, agent.max_exec_output, hints, marker)
    observation += appendix
    if rewritten is not None:
        observation += f"\n{rewritten.text}"
    observation += "".join(f"\n{n.text}" for n in notes if n.kind is InterventionKind.KEEP)
    doubts: list[Intervention] = []
    if given is not None:
        doubts = await agent._pipeline.before_answer(turn, Answer(given, cell))
        observation += "".join(f"\n{d.text}" for d in doubts)
    cell.messages.append(agent.conversation.add_observation(observation))
    event = cell_event(
        result, author=CellAuthor.AGENT, observation=observation, step=step, delivered=appendix
    )
    if isinstance(event, ev.ExecutionOutputEvent | ev.ExecutionErrorEvent):
        event.persisted_variable = kept_as
    yield event
    notice = ev.runtime_notice(result, step)
    if notice is not None:  # the observation tells the model; this tells the user
        yield notice
    for note in notes:
        rewind = note.kind is InterventionKind.REWIND
        if not rewind or turn.rewind(note.request):
            turn.resample += rewind and note.resample
            yield note
    if given is not None and any(d.holds for d in doubts):
        turn.held_answer = given
    for doubt in doubts:
        yield doubt
    if given is not None and not doubts:
        yield AcceptedAnswer(given)


async def keep_long_output(
    agent: StepAgent, result: ExecutionResult
) -> tuple[str | None, str | None]:
    """Output over `max_exec_output` kept in the namespace: the marker the model reads and
    the name, or (None, None) when it fits or cannot be kept (then its head and tail are
    shown, as before)."""
    output = result.output  # kept as printed, its last newline too (upstream 0.8's value)
    if result.blocked or len(output.rstrip("\n")) <= agent.max_exec_output:
        return None, None
    history = (str(m.get("content") or "") for m in agent.conversation.messages)
    try:
        return await agent.persisted_outputs.keep(agent.runtime, output, history)
    except Exception:  # e.g. no room in the kernel: the output is still shown, cut
        return None, None


def _own_output(item: Any) -> bool:
    """A streamed chunk of this agent's own cell (a sub-agent's is tagged with its name)."""
    return isinstance(item, ev.OutputEvent) and item.agent is None
