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
from typing import TYPE_CHECKING, Any

from cave_tui.agent import events as ev
from cave_tui.agent.approval import SKIPPED_NOTE, Approved, Approver, gate
from cave_tui.agent.budget import RunBudget
from cave_tui.agent.cell_step import run_cell_step
from cave_tui.agent.conversation import Conversation
from cave_tui.agent.event_stream import EventStream
from cave_tui.agent.extensions import Alias, Extensions
from cave_tui.agent.extraction import extract_code
from cave_tui.agent.final_answer import (
    AcceptedAnswer,
)
from cave_tui.agent.kept_work import kept_work
from cave_tui.agent.messages import close_open_fence
from cave_tui.agent.observation import OBSERVATION_LIMIT
from cave_tui.agent.persisted_output import (
    PERSISTED_OUTPUT_PREFIX,
    PREVIEW_CHARS,
    PersistedOutputs,
)
from cave_tui.agent.policies import (
    AgentPolicy,
    Intervention,
    PolicyPipeline,
    resolve_policies,
)
from cave_tui.agent.policies.model_class import (
    AUTO,
    ModelClass,
    PresetChoice,
    chosen,
    continues_replies,
    is_local,
    preset_for,
    served_params,
)
from cave_tui.agent.prompt import (
    DEFAULT_INSTRUCTIONS,
    DEFAULT_SYSTEM_INSTRUCTIONS,
    DEFAULT_SYSTEM_PROMPT_TEMPLATE,
)
from cave_tui.agent.request import PromptBuilder
from cave_tui.agent.response import (
    AgentResponse,
    AgentStatus,
    ExecutionStatus,
    RunDone,
    RunTally,
)
from cave_tui.agent.stop_reason import StopReason
from cave_tui.agent.streaming import Reply, stream_reply
from cave_tui.agent.subagents import describe_agent
from cave_tui.agent.turn import Answer, Turn
from cave_tui.models.base import Message, Model, ModelError, Usage
from cave_tui.runtime.base import Runtime
from cave_tui.runtime.errors import RuntimeExecutionError

if TYPE_CHECKING:
    from cave_tui.agent.compaction import CompactionPolicy, Compactor
    from cave_tui.logger import LogLevel
    from cave_tui.skills.registry import SkillRegistry
    from cave_tui.skills.runtime_bridge import SkillBridge

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
# Sent as a stop sequence, so a server stops there and reports its exact usage; where the
# block closes is read by the streaming parser (`agent.streaming.FirstBlockCut`, which also
# cuts a model that takes no stop). A server's stop also fires on a ``` line inside a
# string: rare, and the model then sees the SyntaxError, against a local count of every
# reply a model goes on writing after its block.
CODE_END_STOP = "\n```\n"
DEFAULT_CONTEXT_WINDOW = 128_000  # upstream's default: compaction on, at ~77% of it
STREAM_IDLE_LIMIT = 120.0  # upstream 0.8's default `stream_idle_timeout`
EMPTY_REPLY = "the model sent an empty reply: no answer and no code"  # not a completed run
TRUNCATED_REPLY = (  # 0.8: a fragment is not an answer (MODEL_ERROR), its text kept
    "the model's reply was still cut by the output limit after its continuations"
)


class CaveAgent:
    """An agent that acts by writing Python into a persistent runtime.

    Composed of its `conversation`, the `prompt` builder and its `extensions` (skills,
    compaction, sub-agents, event sinks); their public methods are the agent's too.
    """

    # Upstream-era private names, still used by code written against them.
    _compactor: Alias[Compactor | None] = Alias("compactor")
    _skill_registry: Alias[SkillRegistry] = Alias("skill_registry")
    _skill_bridge: Alias[SkillBridge | None] = Alias("skill_bridge")
    _sinks: Alias[list[Callable[[ev.Event], None]]] = Alias("sinks")

    def __init__(
        self,
        model: Model,
        runtime: Runtime | None = None,
        *,
        max_steps: int = 10,
        max_exec_output: int = OBSERVATION_LIMIT,
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
        max_run_time: float | None = None,
        max_total_tokens: int | None = None,
        max_input_tokens: int | None = None,
        max_output_tokens: int | None = None,
        log_level: LogLevel | None = None,
        exec_output_preview_chars: int = PREVIEW_CHARS,
        persisted_output_prefix: str = PERSISTED_OUTPUT_PREFIX,
        compactor: CompactionPolicy | None = None,
        stream_idle_timeout: float | None = STREAM_IDLE_LIMIT,
    ) -> None:
        if runtime is None:
            from cave_tui.runtime.ipython import IPythonRuntime

            runtime = IPythonRuntime()
        self.model = model
        self.runtime = runtime
        self.max_steps = max_steps
        # Upstream 0.8's run budgets, checked between steps (agent/budget.py).
        self.budget = RunBudget(max_total_tokens, max_input_tokens, max_output_tokens, max_run_time)
        self.log_level = log_level  # upstream 0.7's logging switch: cave logs nothing to stdout
        self.max_exec_output = max_exec_output
        # Longer output is kept in the namespace as `_output_N` (agent/persisted_output.py).
        self.persisted_outputs = PersistedOutputs(
            persisted_output_prefix, exec_output_preview_chars
        )
        self.max_exec_timeout = max_exec_timeout
        # Upstream 0.8's: the longest wait for each piece of a reply from a model that does
        # not bound it itself (cave's HTTP models do); past it the run ends as a model error.
        self.stream_idle_timeout = stream_idle_timeout
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
        self.compaction_policy = compactor  # upstream 0.8's; sets the window (`Extensions`)
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
        # The preset in force and why: by the model's class unless the caller chose one.
        self.preset_choice: PresetChoice = chosen("custom")
        self._server_params: float | None = None  # what a local server said of its model
        self._size_asked = False
        self._continuation_asked = False
        self.policies = policies if policies is not None else AUTO
        if not rewind:  # upstream-era switch, kept: the same as leaving the policy out
            choice = self.preset_choice
            self.policies = [p for p in self.policies if p.name != "rewind"]
            self.preset_choice = choice
        self._turn: Turn | None = None
        # Set (from any thread) by `stop_turn()`: the running turn ends after its cell.
        self._stop_requested = threading.Event()
        self.in_cell = False  # True from just before a cell of a turn runs until it returns
        self.usage = Usage()  # across all runs of this agent
        self.conversation = Conversation(messages or [], python_block_identifier)
        self.prompt = PromptBuilder(self)
        self.extensions = Extensions(self, CaveAgent)
        self.extensions.install(self)

    def __repr__(self) -> str:
        name = f"name={self.name!r}, " if self.name else ""
        return f"CaveAgent({name}model={self.model.label!r}, runtime={self.runtime.label})"

    @property
    def policies(self) -> list[AgentPolicy]:
        """The policies that may intervene in a turn (see agent/policies/)."""
        return self._pipeline.policies

    @policies.setter
    def policies(self, spec: str | Sequence[Any]) -> None:
        """A preset or spec ("guided,-tips") or a list of names and policy objects; "auto"
        is the preset of the model's class (`model_class.preset_for`)."""
        if isinstance(spec, str) and spec.strip().lower() == AUTO:
            choice = preset_for(self.model, self._server_params)
            spec = choice.preset
        else:
            choice = chosen(spec if isinstance(spec, str) else "custom")
        self._pipeline = PolicyPipeline(resolve_policies(spec))
        self.preset_choice = choice

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

    def stream_events(self, task: str) -> EventStream:
        """Run one user turn, yielding typed events as they happen, a StoppedEvent last
        (aclose() ends it early); rendered to the terminal too when `display` is on, as
        upstream 0.7's are, unless a renderer of the caller's draws them (agent/event_stream.py)."""
        return EventStream(self, task)

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
        self.extensions.emit(event)
        return event

    async def _run_events(self, task: str) -> AsyncGenerator[ev.Event | RunDone, None]:
        tally = RunTally(self.max_steps)
        self._stop_requested.clear()
        request = self.conversation.add_task(task)
        turn = self._turn = Turn(task, request, self.conversation, self.runtime)
        last_text = ""
        step = 0
        ended = False  # the run's RunDone is made: closing the events after it stops nothing

        def done(
            status: AgentStatus,
            content: str,
            error: str | None = None,
            support: ev.AnswerSupport = ev.AnswerSupport.CELL,
            reason: StopReason | None = None,
        ) -> RunDone:
            nonlocal ended
            ended = True
            self.usage = self.usage + tally.usage
            return tally.done(status, content, step, error, support, reason)

        def stopped() -> ev.Event:
            self.conversation.note_interruption()
            return self._emit(ev.CancelledEvent(content="Interrupted.", step=step))

        def told(iv: Intervention) -> ev.Event:
            tally.interventions[iv.policy] += 1
            event = ev.InterventionEvent(content=iv.text, step=step, policy=iv.policy, kind=iv.kind)
            return self._emit(event)

        try:
            await self._size_local_model()
            await self._ask_continuation()
            yield self._emit(ev.UserEvent(content=task))
            while step < self.max_steps:
                if self._stop_requested.is_set():  # stopped by whoever drives us (a parent)
                    yield stopped()
                    yield done(AgentStatus.CANCELLED, last_text, error="interrupted")
                    return
                limit = (
                    self.budget.ended(tally.usage, tally.started)
                    if step
                    else self.budget.allows_no_step()
                )
                if limit:
                    yield done(limit, last_text)  # the step that crossed it completed
                    return
                step += 1
                yield self._emit(ev.StepEvent(step=step))
                compactor = self.extensions.compactor
                if compactor is not None:
                    async for event in compactor.maybe_compact(step):
                        yield self._emit(event)
                    tally.usage = tally.usage + compactor.take_usage()  # summariser calls
                for tip in await self._pipeline.before_request(turn):
                    yield told(tip)
                lead = self._reply_lead()
                if lead is not None and not turn.led:
                    turn.led = True
                    yield told(lead)
                reply = Reply()
                options: dict[str, Any] = {"stop": [CODE_END_STOP]} if self.stop_after_code else {}
                if turn.resample and self.loop_temperature is not None:
                    options["temperature"] = min(self.loop_temperature * turn.resample, 1.0)
                try:
                    async for event in stream_reply(
                        self.model,
                        self.build_request,  # a subclass may override it
                        reply,
                        step,
                        options,
                        self.conversation,
                        compactor,
                        self.python_block_identifier,
                        idle_timeout=None
                        if getattr(self.model, "bounds_own_stream", False)
                        else self.stream_idle_timeout,
                        stop_after_code=self.stop_after_code,
                        lead=lead.request if lead is not None else "",
                    ):
                        yield self._emit(event)
                except ModelError as exc:
                    if reply.unrecorded:
                        self.conversation.add_reply(reply.unrecorded)
                    tally.usage = tally.usage + reply.usage
                    yield self._emit(ev.ErrorEvent(content=str(exc), step=step, kind=exc.kind))
                    yield done(AgentStatus.ERROR, str(exc), error=str(exc))
                    return
                turn.tips = []
                tally.usage = tally.usage + reply.usage
                text = close_open_fence(reply.text) if self.stop_after_code else reply.text
                if not text.strip():  # no answer and no code (nothing, or reasoning alone)
                    yield self._emit(ev.ErrorEvent(content=EMPTY_REPLY, step=step))
                    yield done(AgentStatus.ERROR, "", error=EMPTY_REPLY)  # 0.8: MODEL_ERROR
                    return
                last_text = text
                code = extract_code(text, self.python_block_identifier)
                # the parts cut by the output limit are in the conversation already
                reply_message = self.conversation.add_reply(
                    text[reply.recorded :], code=code is not None
                )
                if code is None and reply.truncated:
                    yield self._emit(ev.ErrorEvent(content=TRUNCATED_REPLY, step=step))
                    yield done(AgentStatus.ERROR, text, error=TRUNCATED_REPLY)  # MODEL_ERROR
                    return
                if code is None:
                    doubts = await self._pipeline.before_answer(turn, Answer(text))
                    if doubts:  # a retracting doubt drops the reply: not echoed at temperature 0
                        note = "\n".join(iv.text for iv in doubts)
                        retract = any(iv.retract for iv in doubts)
                        if not (retract and self.conversation.retract_reply(note)):
                            self.conversation.add_note(note)
                        for doubt in doubts:
                            yield told(doubt)
                        continue
                    support = turn.support
                    held = turn.take_held_answer()  # a look confirmed: its final_answer stands
                    answer_text = text if held is None else held
                    final = ev.FinalResponseEvent(content=answer_text, step=step, support=support)
                    if held is not None:
                        final.source = ev.AnswerSource.FINAL_ANSWER  # not streamed: shown
                    yield self._emit(final)
                    if (kept := await kept_work(turn, step, ended=False)) is not None:
                        yield self._emit(kept)
                    yield done(AgentStatus.COMPLETED, answer_text, support=support)
                    return
                if self._stop_requested.is_set():  # the reply came after the stop: not run
                    yield stopped()
                    yield done(AgentStatus.CANCELLED, last_text, error="interrupted")
                    return
                tally.snippets.append(code)
                yield self._emit(ev.CodeEvent(content=code, code=code, step=step))
                if self.approve is not None:
                    approved: Approved | None = None
                    async for gated in gate(self.approve, code, step, self.conversation):
                        if isinstance(gated, Approved):
                            approved = gated
                        else:
                            yield self._emit(gated)
                    if approved is None:
                        continue
                    code = tally.snippets[-1] = approved.code
                answer: AcceptedAnswer | None = None
                async for item in run_cell_step(self, turn, step, code, reply_message):
                    if isinstance(item, AcceptedAnswer):
                        answer = item
                    else:
                        yield told(item) if isinstance(item, Intervention) else self._emit(item)
                if answer is not None:
                    self.conversation.add_reply(answer.text)
                    answered = ev.AnswerSource.FINAL_ANSWER
                    support = turn.support  # CELL: the cell that gave it succeeded
                    yield self._emit(
                        ev.FinalResponseEvent(
                            content=answer.text, step=step, source=answered, support=support
                        )
                    )
                    if (kept := await kept_work(turn, step, ended=False)) is not None:
                        yield self._emit(kept)
                    yield done(AgentStatus.COMPLETED, answer.text, support=support)
                    return
        except (asyncio.CancelledError, GeneratorExit):  # cancelled, or its events closed
            if not ended:
                self.conversation.note_interruption()
            raise
        except RuntimeExecutionError as exc:  # 0.8: RUNTIME_ERROR, not blamed on the model
            error = f"{type(exc).__name__}: {exc}"
            yield self._emit(ev.ErrorEvent(content=error, step=step))
            yield done(AgentStatus.ERROR, last_text, error=error, reason=StopReason.RUNTIME_ERROR)
            return
        finally:
            self._turn = None
        yield self._emit(
            ev.MaxStepsReachedEvent(
                content=f"Stopped after {self.max_steps} steps without a final answer.", step=step
            )
        )
        if (kept := await kept_work(turn, step, ended=True)) is not None:
            yield self._emit(kept)
        yield done(AgentStatus.MAX_STEPS_REACHED, last_text)

    def _reply_lead(self) -> Intervention | None:
        """The LEAD of a policy that begins the model's replies (`request`: the text), where
        the model continues a reply it is given; else None."""
        if not getattr(self.model, "continues_reply", False):  # upstream's models lack it
            return None
        return self._pipeline.reply_lead(self.python_block_identifier)

    async def _size_local_model(self) -> None:
        """Once: a local model picked by class whose size its name does not say is sized by
        its server (llama.cpp's `/v1/models`), and the preset picked again."""
        api_base = getattr(self.model, "api_base", None)
        unsized = self.preset_choice.model_class is ModelClass.UNSIZED
        if self._size_asked or not unsized or not isinstance(api_base, str):
            return
        self._size_asked = True
        params = await served_params(str(getattr(self.model, "model_id", "")), api_base)
        if params is not None:
            self._server_params = params
            self.policies = AUTO

    async def _ask_continuation(self) -> None:
        """Once, where a policy would begin the replies: a model on a local llama.cpp server
        (its `/props`) continues a reply it is given, as the embedded model does."""
        api_base = getattr(self.model, "api_base", None)
        if self._continuation_asked or getattr(self.model, "continues_reply", None) is not False:
            return
        if not isinstance(api_base, str) or not is_local(
            str(getattr(self.model, "model_id", "")), api_base
        ):
            return
        if self._pipeline.reply_lead(self.python_block_identifier) is None:
            return
        self._continuation_asked = True
        if await continues_replies(api_base):
            self.model.continues_reply = True

    # -- the conversation --------------------------------------------------------------
    @property
    def history(self) -> list[Message]:
        """The conversation's messages without the system one: the list itself, as upstream's
        users read and edit it (the loop changes it through `conversation`)."""
        return self.conversation.messages

    @history.setter
    def history(self, messages: list[Any]) -> None:
        self.conversation.replace(messages)

    def reset_history(self) -> None:
        """Forget the conversation (the runtime is not touched)."""
        self.conversation.reset()

    @property
    def messages(self) -> list[Message]:
        """System prompt plus history, as the provider would see it (without the namespace)."""
        return self.prompt.messages()

    @messages.setter
    def messages(self, messages: list[Any]) -> None:
        """Replace the conversation (a leading system message is rebuilt, not kept)."""
        self.conversation.replace(messages)

    def add_message(self, message: object) -> None:
        """Upstream's: append *message* (a `cave_tui.messages` object or a dict) to the
        conversation."""
        self.conversation.append(message)

    @property
    def persisted_output_prefix(self) -> str:
        """Upstream 0.8's: the prefix of the names long outputs are kept under (`_output`)."""
        return self.persisted_outputs.prefix

    @property
    def exec_output_preview_chars(self) -> int:
        """Upstream 0.8's: how much of a kept output's head its marker shows the model."""
        return self.persisted_outputs.preview_chars

    # -- the prompt (`PromptBuilder`) -------------------------------------------------------
    @property
    def turn(self) -> Turn | None:
        """The turn in progress, if any."""
        return self._turn

    def build_system_prompt(self) -> str:
        """The system prompt of the next model call (upstream's name for `system_prompt()`)."""
        return self.prompt.system_prompt()

    def system_prompt(self, legacy: dict[str, str] | None = None) -> str:
        return self.prompt.system_prompt(legacy)

    async def build_request(self) -> list[Message]:
        """The messages for the next model call: stable prefix first, namespace last."""
        return await self.prompt.build_request()

    async def namespace_text(self) -> str:
        return await self.prompt.namespace_text()

    # -- the extensions (`Extensions`) ----------------------------------------------------
    @property
    def compactor(self) -> Compactor | None:
        """The `Compactor` when `context_window` is set (its breaker, counts), else None."""
        return self.extensions.compactor

    def add_event_sink(self, sink: Callable[[ev.Event], None]) -> None:
        """Also send every event of this agent to *sink* (used to forward sub-agent events)."""
        self.extensions.sinks.append(sink)

    def attach_subagent(self, agent: CaveAgent, label: str | None = None) -> None:
        """Forward *agent*'s events into this agent's stream while its cells run (agents
        injected into this agent's runtime are attached automatically)."""
        self.extensions.subagents.attach(agent, label)

    def __cave_describe__(self, name: str) -> str:
        """How this agent reads in another agent's namespace description."""
        return describe_agent(self, name)
