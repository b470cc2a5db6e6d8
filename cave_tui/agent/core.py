"""`CaveAgent`: the code-as-action loop over a persistent runtime.

One step: build the request (stable system prompt, history, live namespace at
the end) → stream the model's reply → extract its code → run it (the runtime
applies the security checker) → shape the observation → repeat, until a reply
has no code (the final answer) or `max_steps` is reached.

Over 400 lines: it is the loop and its per-turn state, which the steps share. What each
step calls lives beside it (prompt, extraction, observation, answer_checks, recovery,
given, tips, compaction, subagents).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from cave_tui.agent import events as ev
from cave_tui.agent.answer_checks import (
    ALREADY_RAN_NOTE,
    doubt_note,
    empty_note,
    empty_results,
    misspelt_note,
    misspelt_values,
    result_names,
)
from cave_tui.agent.extraction import extract_code
from cave_tui.agent.final_answer import (
    DEFINE_CODE,
    FINAL_NAME,
    NOT_DONE_NOTE,
    MarkedAnswerFilter,
    is_bare_answer,
    take_final_answer,
)
from cave_tui.agent.given import given_note, kept_given, rebound_given
from cave_tui.agent.observation import (
    error_hints,
    frame_columns,
    frame_keys,
    frame_levels,
    repeated_failure_note,
    shape_result,
)
from cave_tui.agent.prompt import (
    DEFAULT_INSTRUCTIONS,
    DEFAULT_SYSTEM_INSTRUCTIONS,
    DEFAULT_SYSTEM_PROMPT_TEMPLATE,
    FINAL_ANSWER_INSTRUCTIONS,
    SKILLS_HEADER,
    TIMEOUT_NOTE,
    describe_namespace,
    legacy_sections,
    render_template,
    uses_inline_namespace,
)
from cave_tui.agent.recovery import MAX_REWINDS, failure_summary, rewound_request
from cave_tui.agent.tips import tips_text
from cave_tui.models.adapt import stream_items
from cave_tui.models.base import (
    Completion,
    ContextOverflowError,
    Message,
    Model,
    ModelError,
    RetryNotice,
    TextDelta,
    Usage,
)
from cave_tui.runtime.base import ExecutionResult, Runtime
from cave_tui.runtime.summary import VarInfo

MAX_CONTINUATIONS = 3
MAX_OVERFLOW_RETRIES = 3  # reactive compactions per model call before giving up
CONTINUE_PROMPT = "Your reply was cut off by the output limit. Continue exactly where it stopped."
TEXT_FLUSH_CHARS = 24
SKIPPED_NOTE = "The user chose not to run that code block; it did not run. Continue without it."
SKIPPED_NOTICE = "code skipped by the user"
# Generation stops where the first code block closes: the block runs next, so anything
# after it (an explanation, a predicted output) would be thrown away, at ~10 tokens/s locally.
CODE_END_STOP = "\n```\n"
REWIND_NOTICE = "failed attempts left the model's context; it retries with their errors noted"


def close_open_fence(text: str) -> str:
    """*text* with its last code fence closed, when a stop sequence cut the closing one."""
    lines = text.rstrip().splitlines()
    fences = [i for i, line in enumerate(lines) if line.lstrip().startswith("```")]
    # Odd, and the last fence opens a block (code follows it): the stop cut its close.
    if len(fences) % 2 and fences[-1] < len(lines) - 1:
        return text.rstrip("\n") + "\n```"
    return text


def edited_note(code: str) -> str:
    """Tells the model its code was replaced by the user's edit before it ran."""
    return f"The user edited your code before running it; this ran instead:\n```python\n{code}\n```"


class AgentStatus(StrEnum):
    """How a run ended. `SUCCESS` is upstream's name for `COMPLETED` (the same member)."""

    COMPLETED = "completed"
    MAX_STEPS_REACHED = "max_steps_reached"
    ERROR = "error"
    CANCELLED = "cancelled"
    SUCCESS = "completed"  # upstream CaveAgent's ExecutionStatus.SUCCESS


ExecutionStatus = AgentStatus  # upstream CaveAgent's name for the status enum

DEFAULT_CONTEXT_WINDOW = 128_000  # upstream's default: compaction on, at ~77% of it


@dataclass
class AgentResponse:
    """The outcome of one `CaveAgent.run()`."""

    content: str
    status: AgentStatus
    steps: int
    code_snippets: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    elapsed: float = 0.0
    error: str | None = None
    max_steps: int = 0  # the limit the run had

    @property
    def completed(self) -> bool:
        return self.status is AgentStatus.COMPLETED

    @property
    def steps_taken(self) -> int:
        """Upstream's name for `steps`."""
        return self.steps

    @property
    def token_usage(self) -> Usage:
        """Upstream's name for `usage` (prompt_tokens, completion_tokens, total_tokens)."""
        return self.usage


def _normalize_message(message: Any) -> Message:
    if isinstance(message, dict):
        return {"role": message["role"], "content": message.get("content") or ""}
    to_dict = getattr(message, "to_dict", None)  # upstream's message classes (cave_tui.types)
    if callable(to_dict):
        return _normalize_message(to_dict())
    role = getattr(message, "role", None)
    role = getattr(role, "value", role)
    return {"role": str(role), "content": str(getattr(message, "content", ""))}


def _merge_consecutive(messages: list[Message]) -> list[Message]:
    """Join same-role neighbours (left by an aborted turn) so every provider accepts them."""
    out: list[Message] = []
    for message in messages:
        if out and out[-1]["role"] == message["role"] and message["role"] != "system":
            out[-1] = {**out[-1], "content": out[-1]["content"] + "\n\n" + message["content"]}
        else:
            out.append(dict(message))
    return out


class CaveAgent:
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
        approve: Callable[[str], Awaitable[str | None]] | None = None,
        stop_after_code: bool = True,
        final_answer: bool = True,
        loop_temperature: float | None = 0.7,
        rewind: bool = True,
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
        # After two failures in a row (or a resent failure), the failed exchanges leave
        # the context and their errors go under the request: see recovery.py.
        self.rewind = rewind
        self._repeats = 0  # consecutive resends of failed code
        # The turn in progress, for rewinds and the empty-answer check (see recovery.py).
        self._turn: Message | None = None
        self._turn_task = ""
        self._turn_failures: list[str] = []
        self._failed_in_row = 0
        self._rewinds = 0
        self._checked = False  # an empty answer or a missing result questioned
        self._wanted: list[str] = []
        self._before: set[str] = set()
        self._stored: set[str] = set()
        self._ran: list[str] = []  # this turn's cells that ran without error
        self.usage = Usage()  # across all runs of this agent
        self.history: list[Message] = [
            _normalize_message(m)
            for m in (messages or [])
            if _normalize_message(m)["role"] != "system"
        ]
        self._last_failed_code: str | None = None
        self._last_failed_type: str | None = None
        self._answer: str | None = None  # set by a cell that called final_answer()
        self._compactor: Any = None
        self._skill_bridge: Any = None
        # Called with each cell's result; each returns text appended to the observation
        # after the output-limit cut (skills deliver their instructions whole this way).
        self._result_hooks: list[Callable[[ExecutionResult], str]] = []
        self._sinks: list[Callable[[ev.Event], None]] = []
        self._setup_extensions()

    # -- hooks for skills/compaction/multi-agent ------------------------------
    def _setup_extensions(self) -> None:
        """Install skills and compaction when configured (kept apart from the loop)."""
        from cave_tui.agent.subagents import SubAgentHub

        self._subagents = SubAgentHub(self, CaveAgent)
        if self.skills:
            from cave_tui.skills.runtime_bridge import install_skills

            install_skills(self)
        if self.context_window:
            from cave_tui.agent.compaction import Compactor

            self._compactor = Compactor(self, self.context_window)

    def add_event_sink(self, sink: Callable[[ev.Event], None]) -> None:
        """Also send every event of this agent to *sink* (used to forward sub-agent events)."""
        self._sinks.append(sink)

    @property
    def compactor(self) -> Any:
        """The `Compactor` when `context_window` is set (its breaker, counts), else None."""
        return self._compactor

    def attach_subagent(self, agent: CaveAgent, label: str | None = None) -> None:
        """Forward *agent*'s events into this agent's stream while its cells run.

        Agents injected into this agent's runtime are attached automatically.
        """
        self._subagents.attach(agent, label)

    def __repr__(self) -> str:
        name = f"name={self.name!r}, " if self.name else ""
        return f"CaveAgent({name}model={self.model.label!r}, runtime={self.runtime.label})"

    def __cave_describe__(self, name: str) -> str:
        """How this agent reads in another agent's namespace description."""
        from cave_tui.agent.subagents import describe_agent

        return describe_agent(self, name)

    # -- prompt ----------------------------------------------------------------
    @property
    def messages(self) -> list[Message]:
        """System prompt plus history, as the provider would see it (without the namespace)."""
        return [{"role": "system", "content": self.system_prompt()}, *self.history]

    @messages.setter
    def messages(self, messages: list[Any]) -> None:
        """Replace the conversation (a leading system message is rebuilt, not kept)."""
        kept = [_normalize_message(m) for m in messages]
        self.history[:] = [m for m in kept if m["role"] != "system"]

    def build_system_prompt(self) -> str:
        """The system prompt of the next model call (upstream's name for `system_prompt()`)."""
        return self.system_prompt()

    def system_prompt(self, legacy: dict[str, str] | None = None) -> str:
        system_instructions = render_template(
            self.system_instructions,
            {
                "python_block_identifier": self.python_block_identifier,
                "final_answer": FINAL_ANSWER_INSTRUCTIONS if self.final_answer else "",
            },
        )
        values: dict[str, Any] = {
            "instructions": self.instructions,
            "system_instructions": system_instructions,
            "python_block_identifier": self.python_block_identifier,
            "skills": self._skills_text(),
            "security": self._security_text(),
        }
        values.update(legacy or {"functions": "", "variables": "", "types": ""})
        prompt = render_template(self.system_prompt_template, values).strip()
        if self.max_exec_timeout is not None:
            prompt += "\n\n" + TIMEOUT_NOTE.format(seconds=f"{self.max_exec_timeout:g}")
        return prompt

    def _skills_text(self) -> str:
        if not self.skills:
            return ""
        lines = [f"- {s.name}: {s.description}" for s in self.skills]
        return SKILLS_HEADER + "\n" + "\n".join(lines)

    def _security_text(self) -> str:
        checker = getattr(self.runtime, "security_checker", None)
        line = getattr(checker, "prompt_line", None)
        if callable(line):
            line = line()
        return f"\n\n{line}" if line else ""

    async def namespace_text(self) -> str:
        return self._describe(await self.runtime.namespace_summary())

    def _describe(self, rows: list[VarInfo]) -> str:
        kwargs = {"budget": self.namespace_budget} if self.namespace_budget else {}
        return describe_namespace(rows, **kwargs)

    async def build_request(self) -> list[Message]:
        """The messages for the next model call: stable prefix first, namespace last."""
        if uses_inline_namespace(self.system_prompt_template):
            rows = await self.runtime.namespace_summary()
            system = self.system_prompt(legacy_sections(rows))
            return _merge_consecutive([{"role": "system", "content": system}, *self.history])
        request = _merge_consecutive(
            [{"role": "system", "content": self.system_prompt()}, *self.history]
        )
        rows = await self.runtime.namespace_summary()
        namespace = self._describe(rows)
        tips = tips_text(self._turn_task or _last_user_text(self.history), rows)
        if tips:
            namespace = f"{namespace}\n{tips}"
        last = request[-1]
        if last["role"] == "user":
            request[-1] = {**last, "content": f"{namespace}\n\n{last['content']}"}
        else:
            request.append({"role": "user", "content": namespace})
        return request

    # -- running -----------------------------------------------------------------
    async def run(self, task: str) -> AgentResponse:
        """Run one user turn to its end and return the outcome."""
        renderer = None
        if self.display and not self.shown_by_parent:
            from cave_tui.agent.display import RichDisplay

            renderer = RichDisplay()
        response: AgentResponse | None = None
        async for event in self._run_events(task):
            if isinstance(event, _Done):
                response = event.response
            elif renderer is not None:
                renderer.render(event)
        assert response is not None
        if renderer is not None:
            renderer.close(response)
        return response

    async def stream_events(self, task: str) -> AsyncGenerator[ev.Event, None]:
        """Run one user turn, yielding typed events as they happen (aclose() ends it early)."""
        async for event in self._run_events(task):
            if not isinstance(event, _Done):
                yield event

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

    async def _run_events(self, task: str) -> AsyncIterator[ev.Event | _Done]:
        started = time.monotonic()
        run_usage = Usage()
        snippets: list[str] = []
        self.history.append({"role": "user", "content": task})
        self._repeats = 0
        self._turn, self._turn_task = self.history[-1], task
        self._turn_failures, self._failed_in_row = [], 0
        # Result names the request asks for, and the names defined before it: see recovery.py.
        self._wanted = result_names(task)
        self._before = {r.name for r in await self._summary()} if self._wanted else set()
        self._stored, self._ran = set(), []
        self._rewinds, self._checked = 0, False
        yield self._emit(ev.UserEvent(content=task))
        last_text = ""
        step = 0

        def done(status: AgentStatus, content: str, error: str | None = None) -> _Done:
            self.usage = self.usage + run_usage
            return _Done(
                response=AgentResponse(
                    content=content,
                    status=status,
                    steps=step,
                    code_snippets=snippets,
                    usage=run_usage,
                    elapsed=time.monotonic() - started,
                    error=error,
                    max_steps=self.max_steps,
                )
            )

        try:
            while step < self.max_steps:
                step += 1
                yield self._emit(ev.StepEvent(step=step))
                if self._compactor is not None:
                    async for event in self._compactor.maybe_compact(step):
                        yield self._emit(event)
                    run_usage = run_usage + self._compactor.take_usage()  # summariser calls
                reply = _Reply()
                try:
                    async for event in self._call_model(step, reply):
                        yield self._emit(event)
                except ModelError as exc:
                    if reply.text:
                        self.history.append({"role": "assistant", "content": reply.text})
                    run_usage = run_usage + reply.usage
                    kind = exc.kind
                    yield self._emit(ev.ErrorEvent(content=str(exc), step=step, kind=kind))
                    yield done(AgentStatus.ERROR, str(exc), error=str(exc))
                    return
                run_usage = run_usage + reply.usage
                text = close_open_fence(reply.text) if self.stop_after_code else reply.text
                last_text = text
                self.history.append({"role": "assistant", "content": text})
                code = extract_code(text, self.python_block_identifier)
                if code is None and not self._checked:
                    note = self._doubt(await self._summary())
                    if note:  # asked once per turn, as for an empty answer
                        self._checked = True
                        self.history.append({"role": "user", "content": note})
                        yield self._emit(ev.NoticeEvent(content=note, step=step))
                        continue
                if code is None:
                    yield self._emit(ev.FinalResponseEvent(content=text, step=step))
                    yield done(AgentStatus.COMPLETED, text)
                    return
                snippets.append(code)
                yield self._emit(ev.CodeEvent(content=code, code=code, step=step))
                if self.approve is not None:
                    approved = await self.approve(code)
                    if approved is None:
                        self.history.append({"role": "user", "content": SKIPPED_NOTE})
                        yield self._emit(
                            ev.NoticeEvent(
                                content=SKIPPED_NOTICE, step=step, kind=ev.NoticeKind.CODE_SKIPPED
                            )
                        )
                        continue
                    if approved.strip() != code.strip():
                        code = snippets[-1] = approved
                        self.history.append({"role": "user", "content": edited_note(code)})
                        yield self._emit(
                            ev.CodeEvent(
                                content=code, code=code, step=step, source=ev.CodeSource.EDITED
                            )
                        )
                self._answer = None
                async for event in self._execute(step, code):
                    yield self._emit(event)
                answer = self._take_answer()
                if answer is not None:  # the cell called final_answer() and succeeded
                    self.history.append({"role": "assistant", "content": answer})
                    yield self._emit(
                        ev.FinalResponseEvent(
                            content=answer, step=step, source=ev.AnswerSource.FINAL_ANSWER
                        )
                    )
                    yield done(AgentStatus.COMPLETED, answer)
                    return
        except asyncio.CancelledError:
            self._note_cancelled()
            raise
        yield self._emit(
            ev.MaxStepsReachedEvent(
                content=f"Stopped after {self.max_steps} steps without a final answer.", step=step
            )
        )
        yield done(AgentStatus.MAX_STEPS_REACHED, last_text)

    def _take_answer(self) -> str | None:
        """The answer the last cell gave with final_answer(), if any; cleared."""
        answer, self._answer = self._answer, None
        return answer

    def _note_cancelled(self) -> None:
        """Leave the history valid after a cancelled turn: it must end with a user turn or reply."""
        if self.history and self.history[-1]["role"] == "assistant":
            self.history.append({"role": "user", "content": "[The user interrupted this step.]"})

    async def _call_model(self, step: int, reply: _Reply) -> AsyncIterator[ev.Event]:
        """Stream one reply into *reply*, continuing it when cut by the output limit."""
        request = await self.build_request()
        options: dict[str, Any] = {"stop": [CODE_END_STOP]} if self.stop_after_code else {}
        if self._repeats and self.loop_temperature is not None:
            options["temperature"] = min(self.loop_temperature * self._repeats, 1.0)
        overflow_retries = 0
        continuations = 0
        while True:
            pending = ""
            finish: str | None = None
            attempt_text = ""
            try:
                async for item in stream_items(self.model, request, **options):
                    if isinstance(item, TextDelta):
                        attempt_text += item.text
                        pending += item.text
                        if len(pending) >= TEXT_FLUSH_CHARS or "\n" in item.text:
                            yield ev.TextEvent(content=pending, step=step)
                            pending = ""
                    elif isinstance(item, RetryNotice):
                        if pending:
                            yield ev.TextEvent(content=pending, step=step)
                            pending = ""
                        if item.discard_partial:
                            attempt_text = ""
                        yield ev.RetryEvent(
                            content=f"retry {item.attempt} in {item.delay:.1f}s: {item.reason}",
                            step=step,
                            attempt=item.attempt,
                            delay=item.delay,
                        )
                    elif isinstance(item, Completion):
                        finish = item.finish_reason
                        reply.usage = reply.usage + item.usage
                        if self._compactor is not None and continuations == 0:
                            self._compactor.observe_usage(
                                item.usage, item.usage_reported, len(self.history)
                            )
                        yield ev.UsageEvent(
                            step=step,
                            prompt_tokens=item.usage.prompt_tokens,
                            completion_tokens=item.usage.completion_tokens,
                            total_tokens=item.usage.total_tokens,
                            run_prompt_tokens=reply.usage.prompt_tokens,
                            run_completion_tokens=reply.usage.completion_tokens,
                            reported=item.usage_reported,
                        )
            except ContextOverflowError:
                if self._compactor is None or overflow_retries >= MAX_OVERFLOW_RETRIES:
                    raise
                overflow_retries += 1
                async for event in self._compactor.compact_now(step, reactive=True):
                    yield event
                reply.usage = reply.usage + self._compactor.take_usage()
                request = await self.build_request()
                continue
            except asyncio.CancelledError:
                reply.text += attempt_text
                if reply.text:
                    self.history.append(
                        {"role": "assistant", "content": reply.text + "\n[interrupted by the user]"}
                    )
                raise
            if pending:
                yield ev.TextEvent(content=pending, step=step)
            reply.text += attempt_text
            if finish == "length" and continuations < MAX_CONTINUATIONS:
                continuations += 1
                yield ev.NoticeEvent(
                    content=(
                        "reply cut by the output limit; "
                        f"continuing ({continuations}/{MAX_CONTINUATIONS})"
                    ),
                    step=step,
                )
                request = [
                    *request,
                    {"role": "assistant", "content": attempt_text},
                    {"role": "user", "content": CONTINUE_PROMPT},
                ]
                continue
            return

    async def _execute(self, step: int, code: str) -> AsyncIterator[ev.Event]:
        normalized = _normalize(code)
        if self._last_failed_code is not None and normalized == self._last_failed_code:
            self._repeats += 1
            if self._rewind():
                yield ev.NoticeEvent(content=REWIND_NOTICE, step=step)
                return
            note = repeated_failure_note(self._last_failed_type)
            # The copy is dropped: fed back, it makes the next reply copy it once more.
            # The note goes on the failed cell's observation, and the next call samples.
            if len(self.history) >= 2 and self.history[-1]["role"] == "assistant":
                self.history.pop()
                last = self.history[-1]
                if note not in last["content"]:
                    self.history[-1] = {**last, "content": f"{last['content']}\n{note}"}
            else:
                self.history.append({"role": "user", "content": note})
            yield ev.ExecutionErrorEvent(
                content=note, step=step, error=note, error_type="RepeatedFailure"
            )
            return
        self._repeats = 0
        if self._ran and _normalize(self._ran[-1]) == normalized and FINAL_NAME not in code:
            # The same cell again after it ran without error: a loop, not progress.
            note = "" if self._checked else self._doubt(await self._summary())
            self._checked = True
            note = note or ALREADY_RAN_NOTE
            self.history.append({"role": "user", "content": note})
            yield ev.NoticeEvent(content=note, step=step)
            return
        if self.final_answer and self._last_failed_code is not None and is_bare_answer(code):
            if self._rewind():
                yield ev.NoticeEvent(content=REWIND_NOTICE, step=step)
                return
            self.history.append({"role": "user", "content": NOT_DONE_NOTE})
            yield ev.ExecutionErrorEvent(
                content=NOT_DONE_NOTE, step=step, error=NOT_DONE_NOTE, error_type="NotDone"
            )
            return
        result: ExecutionResult | None = None
        rebound = rebound_given(code, self.runtime.injected, self._turn_task)
        if rebound:  # an empty injected variable is an output slot to fill (given.py)
            rebound = kept_given(rebound, await self._summary())
        if rebound:  # not run: it would replace the user's objects
            note = given_note(rebound)
            result = ExecutionResult(success=False, error=note, error_type="GivenReplaced")
        elif self.final_answer and FINAL_NAME in code:
            await self.runtime.execute(DEFINE_CODE)  # (re)defined here: see final_answer.py
        try:
            # Events of sub-agents driven by this cell arrive while it runs.
            if result is None:
                marks = MarkedAnswerFilter() if self.final_answer else None
                async for item in self._subagents.execute(code, self.max_exec_timeout, step):
                    if isinstance(item, ExecutionResult):
                        result = item
                    elif marks is not None and _own_output(item):
                        item.content = marks.feed(item.content)  # the answer is shown apart
                        if item.content or item.dropped:
                            yield item
                    else:
                        yield item
        except asyncio.CancelledError:
            self.history.append({"role": "user", "content": "Execution interrupted by the user."})
            raise
        except Exception as exc:  # the runtime itself failed (e.g. kernel could not start)
            result = ExecutionResult(
                success=False, error=f"{type(exc).__name__}: {exc}", error_type=type(exc).__name__
            )
        assert result is not None
        if self.final_answer:
            self._answer = take_final_answer(result)
        appendix = "".join(hook(result) for hook in self._result_hooks)
        hints: list[str] = []
        if not result.success:
            rows = await self._summary()
            frames = frame_columns(rows)
            hints = error_hints(code, result, frames, frame_levels(rows), frame_keys(rows))
            hints += [misspelt_note(pair) for pair in self._misspelt(code, frames)]
        observation = shape_result(result, self.max_exec_output, hints) + appendix
        if result.success:
            self._stored.update(result.changed)
            self._ran.append(code)
        if result.success and self._answer is not None and not self._checked:
            # Asked once per turn: a second final_answer is accepted as it is.
            rows = await self._summary()
            empty = empty_results(rows, result.changed)
            doubt = "" if empty else self._doubt(rows)
            if empty:
                misspelt = self._misspelt(code, frame_columns(rows))
                observation += "\n" + empty_note(empty, misspelt)
            elif doubt:
                observation += "\n" + doubt
            if empty or doubt:
                self._checked = True
                self._answer = None
        self.history.append({"role": "user", "content": observation})
        if result.success:
            self._last_failed_code = None
            self._failed_in_row = 0
            yield ev.ExecutionOutputEvent(
                content=observation,
                step=step,
                output=result.output,
                changed=list(result.changed),
                duration=result.duration,
            )
            return
        self._last_failed_code = normalized
        self._last_failed_type = result.error_type
        self._turn_failures.append(failure_summary(result, hints))
        self._failed_in_row += 1
        rewound = self._failed_in_row >= 2 and self._rewind()
        if result.blocked:
            yield ev.SecurityErrorEvent(
                content=observation,
                step=step,
                violations=[_violation_dict(v) for v in result.security_violations],
            )
        else:
            yield ev.ExecutionErrorEvent(
                content=observation,
                step=step,
                output=result.output,
                error=result.error_text or "",
                error_type=result.error_type or "",
                changed=list(result.changed),
                duration=result.duration,
                timed_out=result.timed_out,
            )
        if rewound:
            yield ev.NoticeEvent(content=REWIND_NOTICE, step=step)

    def _misspelt(self, code: str, frames: dict[str, dict[str, str]]) -> list[tuple[str, str]]:
        columns = [column for frame in frames.values() for column in frame]
        return misspelt_values(code, self._turn_task, columns)

    def _doubt(self, rows: list[VarInfo]) -> str:
        """Why the turn's answer is not given yet, or "" (answer_checks.doubt_note)."""
        return doubt_note(
            self._wanted, rows, self._turn_task, self._stored, self._before, self._ran
        )

    def _rewind(self) -> bool:
        """Drop this turn's failed exchanges; note their errors under the request.

        False (nothing done) when rewinds are off or used up, or when compaction has
        replaced the turn's request since it was sent.
        """
        if not self.rewind or self._rewinds >= MAX_REWINDS or not self._turn_failures:
            return False
        start = next((i for i, m in enumerate(self.history) if m is self._turn), None)
        if start is None:
            return False
        self._rewinds += 1
        self._failed_in_row = 0
        del self.history[start + 1 :]
        content = rewound_request(self._turn_task, self._turn_failures)
        self._turn = self.history[start] = {"role": "user", "content": content}
        return True

    async def _summary(self) -> list[VarInfo]:
        try:
            return await self.runtime.namespace_summary()
        except Exception:
            return []

    # -- conveniences ----------------------------------------------------------------
    def reset_history(self) -> None:
        self.history.clear()
        self._last_failed_code = None


def _own_output(item: Any) -> bool:
    """A streamed chunk of this agent's own cell (a sub-agent's is tagged with its name)."""
    return isinstance(item, ev.OutputEvent) and item.agent is None


def _normalize(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip().splitlines())


def _last_user_text(history: list[Message]) -> str:
    """The newest user message's text: the request, for callers that fill history by hand."""
    for message in reversed(history):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return message["content"]
    return ""


def _violation_dict(v: Any) -> dict[str, Any]:
    return {
        "rule": str(getattr(v, "rule", "")),
        "message": str(getattr(v, "message", v)),
        "lineno": getattr(v, "lineno", None),
        "col": getattr(v, "col", getattr(v, "col_offset", None)),
    }


@dataclass
class _Reply:
    text: str = ""
    usage: Usage = field(default_factory=Usage)


@dataclass
class _Done:
    """Internal end-of-run marker carrying the response; never shown to consumers."""

    response: AgentResponse
