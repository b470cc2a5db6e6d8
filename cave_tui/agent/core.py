"""`CaveAgent`: the code-as-action loop over a persistent runtime.

One step: build the request (stable system prompt, history, live namespace at
the end) → stream the model's reply → extract its code → run it (the runtime
applies the security checker) → shape the observation → repeat, until a reply
has no code (the final answer) or `max_steps` is reached. Policies (agent/policies/)
may intervene at each point; the loop itself owns no heuristic.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Any

from cave_tui.agent import events as ev
from cave_tui.agent.approval import SKIPPED_NOTE, Approver, gate
from cave_tui.agent.cells import CellAuthor, cell_event, run_cell
from cave_tui.agent.events import InterventionKind
from cave_tui.agent.extensions import AgentExtensions
from cave_tui.agent.extraction import extract_code
from cave_tui.agent.final_answer import (
    DEFINE_CODE,
    FINAL_NAME,
    MarkedAnswerFilter,
    take_final_answer,
)
from cave_tui.agent.messages import close_open_fence, normalize_message
from cave_tui.agent.observation import shape_result
from cave_tui.agent.policies import (
    DEFAULT_PRESET,
    AgentPolicy,
    Intervention,
    PolicyPipeline,
    resolve_policies,
)
from cave_tui.agent.prompt import (
    DEFAULT_INSTRUCTIONS,
    DEFAULT_SYSTEM_INSTRUCTIONS,
    DEFAULT_SYSTEM_PROMPT_TEMPLATE,
)
from cave_tui.agent.request import AgentPrompt
from cave_tui.agent.response import (
    AgentResponse,
    AgentStatus,
    ExecutionStatus,
    RunDone,
    RunTally,
)
from cave_tui.agent.streaming import Reply, stream_reply
from cave_tui.agent.turn import Answer, CellRecord, Turn
from cave_tui.models.base import Message, Model, ModelError, Usage
from cave_tui.runtime.base import ExecutionResult, Runtime

__all__ = [
    "SKIPPED_NOTE",
    "AgentResponse",
    "AgentStatus",
    "CaveAgent",
    "ExecutionStatus",
    "close_open_fence",
]

# Generation stops where the first code block closes: the block runs next, so anything
# after it (an explanation, a predicted output) would be thrown away, at ~10 tokens/s locally.
CODE_END_STOP = "\n```\n"
DEFAULT_CONTEXT_WINDOW = 128_000  # upstream's default: compaction on, at ~77% of it


class CaveAgent(AgentPrompt, AgentExtensions):
    """An agent that acts by writing Python into a persistent runtime."""

    def __init__(
        self,
        model: Model,
        runtime: Runtime | None = None,
        *,
        max_steps: int = 10,
        max_exec_output: int = 5000,
        max_exec_timeout: float | None = None,
        instructions: str | None = None,
        system_instructions: str | None = None,
        system_prompt_template: str | None = None,
        python_block_identifier: str = "python",
        messages: list[Any] | None = None,
        display: bool = True,
        skills: list[Any] | None = None,
        context_window: int | None = DEFAULT_CONTEXT_WINDOW,
        name: str | None = None,
        namespace_budget: int | None = None,
        approve: Approver | None = None,
        stop_after_code: bool = True,
        final_answer: bool = True,
        loop_temperature: float | None = 0.7,
        rewind: bool = True,
        policies: str | Sequence[Any] | None = None,
    ) -> None:
        if runtime is None:
            from cave_tui.runtime.ipython import IPythonRuntime

            runtime = IPythonRuntime()
        self.model = model
        self.runtime = runtime
        self.max_steps = max_steps
        self.max_exec_output = max_exec_output
        self.max_exec_timeout = max_exec_timeout
        self.instructions = instructions if instructions is not None else DEFAULT_INSTRUCTIONS
        self.system_instructions = (
            system_instructions if system_instructions is not None else DEFAULT_SYSTEM_INSTRUCTIONS
        )
        self.system_prompt_template = system_prompt_template or DEFAULT_SYSTEM_PROMPT_TEMPLATE
        self.python_block_identifier = python_block_identifier
        self.display = display
        # Set when another agent attaches this one as a sub-agent: that agent shows our
        # events in its own stream, so `display` does not print them a second time.
        self.shown_by_parent = False
        self.name = name
        self.context_window = context_window
        self.namespace_budget = namespace_budget
        self.skills: list[Any] = list(skills or [])
        # Optional gate before each cell: returns the code to run (maybe edited) or None to skip.
        self.approve = approve
        self.stop_after_code = stop_after_code
        # `final_answer(answer)` in a cell ends the turn without one more model call.
        self.final_answer = final_answer
        # A model that resends code that just failed is stuck (at temperature 0 it always
        # will be): the next call samples at this temperature, once, to get out of it.
        self.loop_temperature = loop_temperature
        self._pipeline = PolicyPipeline(())
        self.policies = policies if policies is not None else DEFAULT_PRESET
        if not rewind:  # upstream-era switch, kept: the same as leaving the policy out
            self.policies = [p for p in self.policies if p.name != "rewind"]
        self._turn: Turn | None = None
        # Set (from any thread) by `stop_turn()`: the running turn ends after its cell.
        self._stop_requested = threading.Event()
        self.in_cell = False  # True from just before a cell of a turn runs until it returns
        self.usage = Usage()  # across all runs of this agent
        self.history: list[Message] = [
            normalize_message(m)
            for m in (messages or [])
            if normalize_message(m)["role"] != "system"
        ]
        self._compactor: Any = None
        self._skill_bridge: Any = None
        # Called with each cell's result; each returns text appended to the observation
        # after the output-limit cut (skills deliver their instructions whole this way).
        self._result_hooks: list[Callable[[ExecutionResult], str]] = []
        self._sinks: list[Callable[[ev.Event], None]] = []
        self._setup_extensions(CaveAgent)

    def __repr__(self) -> str:
        name = f"name={self.name!r}, " if self.name else ""
        return f"CaveAgent({name}model={self.model.label!r}, runtime={self.runtime.label})"

    @property
    def policies(self) -> list[AgentPolicy]:
        """The policies that may intervene in a turn (see agent/policies/)."""
        return self._pipeline.policies

    @policies.setter
    def policies(self, spec: str | Sequence[Any]) -> None:
        """A preset or spec ("guided,-tips") or a list of names and policy objects."""
        self._pipeline = PolicyPipeline(resolve_policies(spec))

    # -- running -----------------------------------------------------------------
    def stop_turn(self) -> None:
        """Ask the running turn to end, cancelled, once its current cell returns, without
        asking the model again or starting another cell (thread-safe). The caller interrupts
        the cell itself, for as long as `in_cell` reads True after this call."""
        self._stop_requested.set()

    async def stop(self, grace: float = 5.0) -> bool:
        """`stop_turn()`, and interrupt the turn's cell until it has returned (a cell about to
        start is caught once it has); True unless the cell still ran after *grace* seconds."""
        self.stop_turn()
        deadline = time.monotonic() + grace
        while self.in_cell:
            if time.monotonic() >= deadline:
                return False
            await self.runtime.interrupt()
            await self._cell_over(0.2)  # a moment for the interrupted cell to end, then again
        return True

    async def _cell_over(self, wait: float) -> None:
        """Return once no cell of ours runs, or after *wait* seconds."""
        deadline = time.monotonic() + wait
        while self.in_cell and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    async def run(self, task: str) -> AgentResponse:
        """Run one user turn to its end and return the outcome (rendered when `display`)."""
        response: AgentResponse | None = None
        async for event in self._displayed(self._run_events(task)):
            if isinstance(event, RunDone):
                response = event.response
        assert response is not None
        return response

    async def stream_events(self, task: str) -> AsyncGenerator[ev.Event, None]:
        """Run one user turn, yielding typed events as they happen (aclose() ends it early);
        rendered to the terminal too when `display` is on, as upstream's are."""
        async for event in self._displayed(self._run_events(task)):
            if not isinstance(event, RunDone):
                yield event

    def _displayed(self, events: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """*events*, rendered with Rich when `display` is on and no parent agent shows them."""
        if not self.display or self.shown_by_parent:
            return events
        from cave_tui.agent.display import rendered

        return rendered(events)

    def run_sync(self, task: str) -> AgentResponse:
        """`run()` for synchronous callers (including code inside another agent's cell)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run(task))
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, self.run(task)).result()

    def _emit(self, event: ev.Event) -> ev.Event:
        if event.agent is None:
            event.agent = self.name
        for sink in self._sinks:
            try:
                sink(event)
            except Exception:
                pass
        return event

    async def _run_events(self, task: str) -> AsyncIterator[ev.Event | RunDone]:
        tally = RunTally(self.max_steps)
        self._stop_requested.clear()
        self.history.append({"role": "user", "content": task})
        turn = self._turn = Turn(task, self.history[-1], self.history, self.runtime)
        yield self._emit(ev.UserEvent(content=task))
        last_text = ""
        step = 0

        def done(
            status: AgentStatus,
            content: str,
            error: str | None = None,
            support: ev.AnswerSupport = ev.AnswerSupport.CELL,
        ) -> RunDone:
            self.usage = self.usage + tally.usage
            return tally.done(status, content, step, error, support)

        def stopped() -> ev.Event:
            self._note_cancelled()
            return self._emit(ev.CancelledEvent(content="Interrupted.", step=step))

        def told(iv: Intervention) -> ev.Event:
            tally.interventions[iv.policy] += 1
            event = ev.InterventionEvent(content=iv.text, step=step, policy=iv.policy, kind=iv.kind)
            return self._emit(event)

        try:
            while step < self.max_steps:
                if self._stop_requested.is_set():  # stopped by whoever drives us (a parent)
                    yield stopped()
                    yield done(AgentStatus.CANCELLED, last_text, error="interrupted")
                    return
                step += 1
                yield self._emit(ev.StepEvent(step=step))
                if self._compactor is not None:
                    async for event in self._compactor.maybe_compact(step):
                        yield self._emit(event)
                    tally.usage = tally.usage + self._compactor.take_usage()  # summariser calls
                for tip in await self._pipeline.before_request(turn):
                    yield told(tip)
                reply = Reply()
                options: dict[str, Any] = {"stop": [CODE_END_STOP]} if self.stop_after_code else {}
                if turn.resample and self.loop_temperature is not None:
                    options["temperature"] = min(self.loop_temperature * turn.resample, 1.0)
                try:
                    async for event in stream_reply(
                        self.model,
                        self.build_request,
                        reply,
                        step,
                        options,
                        self.history,
                        self._compactor,
                        self.python_block_identifier,
                    ):
                        yield self._emit(event)
                except ModelError as exc:
                    if reply.text:
                        self.history.append({"role": "assistant", "content": reply.text})
                    tally.usage = tally.usage + reply.usage
                    yield self._emit(ev.ErrorEvent(content=str(exc), step=step, kind=exc.kind))
                    yield done(AgentStatus.ERROR, str(exc), error=str(exc))
                    return
                turn.tips = []
                tally.usage = tally.usage + reply.usage
                text = close_open_fence(reply.text) if self.stop_after_code else reply.text
                last_text = text
                reply_message: Message = {"role": "assistant", "content": text}
                self.history.append(reply_message)
                code = extract_code(text, self.python_block_identifier)
                if code is None:
                    doubts = await self._pipeline.before_answer(turn, Answer(text))
                    if doubts:
                        self.history.append({"role": "user", "content": _joined(doubts)})
                        for doubt in doubts:
                            yield told(doubt)
                        continue
                    support = turn.support
                    final = ev.FinalResponseEvent(content=text, step=step, support=support)
                    yield self._emit(final)
                    yield done(AgentStatus.COMPLETED, text, support=support)
                    return
                if self._stop_requested.is_set():  # the reply came after the stop: not run
                    yield stopped()
                    yield done(AgentStatus.CANCELLED, last_text, error="interrupted")
                    return
                tally.snippets.append(code)
                yield self._emit(ev.CodeEvent(content=code, code=code, step=step))
                if self.approve is not None:
                    chosen: list[str] = []
                    async for event in gate(self.approve, code, step, self.history, chosen):
                        yield self._emit(event)
                    if not chosen:
                        continue
                    code = tally.snippets[-1] = chosen[0]
                answer: list[str] = []
                async for item in self._execute(turn, step, code, reply_message, answer):
                    yield told(item) if isinstance(item, Intervention) else self._emit(item)
                if answer:  # the cell called final_answer(), succeeded and was not doubted
                    self.history.append({"role": "assistant", "content": answer[0]})
                    answered = ev.AnswerSource.FINAL_ANSWER
                    support = turn.support  # CELL: the cell that gave it succeeded
                    yield self._emit(
                        ev.FinalResponseEvent(
                            content=answer[0], step=step, source=answered, support=support
                        )
                    )
                    yield done(AgentStatus.COMPLETED, answer[0], support=support)
                    return
        except asyncio.CancelledError:
            self._note_cancelled()
            raise
        finally:
            self._turn = None
        yield self._emit(
            ev.MaxStepsReachedEvent(
                content=f"Stopped after {self.max_steps} steps without a final answer.", step=step
            )
        )
        yield done(AgentStatus.MAX_STEPS_REACHED, last_text)

    def _note_cancelled(self) -> None:
        """Leave the history valid after a cancelled turn: it must end with a user turn or reply."""
        if self.history and self.history[-1]["role"] == "assistant":
            self.history.append({"role": "user", "content": "[The user interrupted this step.]"})

    async def _execute(
        self, turn: Turn, step: int, code: str, reply: Message, answer: list[str]
    ) -> AsyncIterator[ev.Event | Intervention]:
        """Run one cell unless a policy refuses it; an accepted final answer goes in *answer*."""
        refusal = await self._pipeline.before_cell(turn, code)
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
        if self.final_answer and FINAL_NAME in code:
            await self.runtime.execute(DEFINE_CODE)  # (re)defined here: see final_answer.py
        result: ExecutionResult | None = None
        self.in_cell = True  # before the check: `stop_turn()`'s caller reads it after setting
        try:
            if self._stop_requested.is_set():
                return  # stopped before the cell started: the turn ends without it
            marks = MarkedAnswerFilter() if self.final_answer else None
            # Events of sub-agents driven by this cell arrive while it runs.
            cell_run = run_cell(
                self.runtime,
                code,
                author=CellAuthor.AGENT,
                timeout=self.max_exec_timeout,
                step=step,
                add_on=self._subagents,
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
            self.history.append({"role": "user", "content": "Execution interrupted by the user."})
            raise
        except Exception as exc:  # the runtime itself failed (e.g. kernel could not start)
            error = f"{type(exc).__name__}: {exc}"
            result = ExecutionResult(success=False, error=error, error_type=type(exc).__name__)
        finally:
            self.in_cell = False
        assert result is not None
        given = take_final_answer(result) if self.final_answer else None
        appendix = "".join(hook(result) for hook in self._result_hooks)  # may consume output
        cell = CellRecord(code, result, step, messages=[reply])
        turn.record(cell)
        notes = await self._pipeline.after_cell(turn, cell)
        hints = [n.text for n in notes if n.kind is InterventionKind.HINT]
        observation = shape_result(result, self.max_exec_output, hints)
        observation += appendix
        observation += "".join(f"\n{n.text}" for n in notes if n.kind is InterventionKind.KEEP)
        doubts: list[Intervention] = []
        if given is not None:
            doubts = await self._pipeline.before_answer(turn, Answer(given, cell))
            observation += "".join(f"\n{d.text}" for d in doubts)
        message: Message = {"role": "user", "content": observation}
        self.history.append(message)
        cell.messages.append(message)
        yield cell_event(
            result, author=CellAuthor.AGENT, observation=observation, step=step, delivered=appendix
        )
        notice = ev.runtime_notice(result, step)
        if notice is not None:  # the observation tells the model; this tells the user
            yield notice
        for note in notes:
            rewind = note.kind is InterventionKind.REWIND
            if not rewind or turn.rewind(note.request):
                turn.resample += rewind and note.resample
                yield note
        for doubt in doubts:
            yield doubt
        if given is not None and not doubts:
            answer.append(given)

    # -- conveniences ----------------------------------------------------------------
    def reset_history(self) -> None:
        self.history.clear()


def _joined(interventions: list[Intervention]) -> str:
    return "\n".join(iv.text for iv in interventions)


def _own_output(item: Any) -> bool:
    """A streamed chunk of this agent's own cell (a sub-agent's is tagged with its name)."""
    return isinstance(item, ev.OutputEvent) and item.agent is None
