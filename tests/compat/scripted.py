"""A scripted stand-in for the hosted model of upstream's examples and README snippets.

`ConversationModel` reads each request the way a model would: it finds the turn whose
request the conversation is on (a substring of a user message) and replies with that
turn's code while the code has not run, then with its answer. It keeps no state
between calls, so several agents can share one model (as upstream's multi-agent
example does) and extra calls the agent makes (a question about a missing result, a
rewind) still get a sensible reply. Summary requests (compaction) get a summary; a
reply cut by the output limit (`Turn(cut=...)`) is continued where it stopped.

`run_example` runs a script as `__main__` with the hosted model classes replaced by a
factory that returns this model, and records every agent it builds with its events.
"""

from __future__ import annotations

import runpy
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cave_tui.agent import CaveAgent
from cave_tui.agent.events import Event, EventType
from cave_tui.models.base import (
    Completion,
    Message,
    Model,
    ModelError,
    StreamItem,
    TextDelta,
    Usage,
)
from cave_tui.models.tokens import count_messages, count_text

SUMMARY_MARK = "<summary>"  # both summary prompts (cave's and upstream's tiers) name the block


@dataclass
class Turn:
    """One request and how the model handles it: run *code*, then say *answer*."""

    request: str  # a substring of the user message that asks for this turn
    code: str | None  # the cell (None: answer at once)
    answer: str
    cut: int | None = None  # cut the code reply after this many characters (finish "length")

    @property
    def code_reply(self) -> str:
        return f"I'll do that in code.\n```python\n{self.code}\n```"


@dataclass
class ConversationModel(Model):
    """Replies from *turns* by reading the conversation; see the module docstring."""

    turns: list[Turn]
    summary: str = "The user asked for analyses; the results are in the session."
    model_id: str = "scripted-conversation"
    requests: list[list[Message]] = field(default_factory=list)

    def reply(self, messages: list[Message]) -> tuple[str, str]:
        """`(text, finish_reason)` for one request."""
        if (
            messages
            and messages[0]["role"] == "system"
            and SUMMARY_MARK in str(messages[0]["content"])
        ):
            return f"<analysis>notes</analysis>\n<summary>{self.summary}</summary>", "stop"
        if len(messages) >= 2 and messages[-2]["role"] == "assistant":
            partial = str(messages[-2]["content"])
            for turn in self.turns:
                full = turn.code_reply
                if turn.cut and partial and full.startswith(partial) and partial != full:
                    return full[len(partial) :], "stop"
        users = [str(m["content"]) for m in messages if m["role"] == "user"]
        for age, content in enumerate(reversed(users)):
            turn = next((t for t in self.turns if t.request in content), None)
            if turn is None:
                continue
            if age == 0 and turn.code is not None:
                if turn.cut:
                    return turn.code_reply[: turn.cut], "length"
                return turn.code_reply, "stop"
            return turn.answer, "stop"
        raise ModelError(f"no scripted turn for this request: {users[-1][-300:]!r}")

    async def stream(self, messages: list[Message], **kwargs: Any) -> AsyncIterator[StreamItem]:
        self.requests.append([dict(m) for m in messages])
        text, finish = self.reply(messages)
        for line in text.splitlines(keepends=True):
            yield TextDelta(line)
        prompt, completion = count_messages(messages), count_text(text)
        yield Completion(
            finish_reason=finish,
            usage=Usage(prompt, completion, prompt + completion, model_calls=1),
        )


@dataclass
class ExampleRun:
    """What running one script did: the models it built and the agents with their events."""

    built: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)
    agents: list[CaveAgent] = field(default_factory=list)
    events: dict[int, list[Event]] = field(default_factory=dict)
    responses: list[Any] = field(default_factory=list)
    namespace: dict[str, Any] = field(default_factory=dict)

    def events_of(self, agent: CaveAgent, kind: EventType | None = None) -> list[Event]:
        seen = self.events.get(id(agent), [])
        return [e for e in seen if kind is None or e.type == kind]


HOSTED = [
    ("cave_tui.models", "OpenAIServerModel"),
    ("cave_tui.models", "LiteLLMModel"),
    ("cave_tui.models.openai", "OpenAIServerModel"),
    ("cave_tui.models.litellm", "LiteLLMModel"),
    ("cave_tui.models", "OpenAIModel"),  # upstream 0.8's name
    ("cave_tui.models.openai", "OpenAIModel"),
]


def substitute_models(monkeypatch: pytest.MonkeyPatch, model: Model, run: ExampleRun) -> None:
    """Make every hosted model class (at each path upstream code imports it from) build
    *model*, recording the class name and the arguments it was given."""
    import importlib

    for module_name, class_name in HOSTED:
        module = importlib.import_module(module_name)

        def build(*args: Any, _name: str = class_name, **kwargs: Any) -> Model:
            run.built.append((_name, args, kwargs))
            return model

        monkeypatch.setattr(module, class_name, build)


def record_agents(monkeypatch: pytest.MonkeyPatch, run: ExampleRun) -> None:
    """Record every `CaveAgent` built, the events each emits and what `run()` returns."""
    original_init = CaveAgent.__init__
    original_run = CaveAgent.run

    def init(self: CaveAgent, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        run.agents.append(self)
        seen = run.events.setdefault(id(self), [])
        self.add_event_sink(seen.append)

    async def run_and_keep(self: CaveAgent, task: str) -> Any:
        response = await original_run(self, task)
        run.responses.append(response)
        return response

    monkeypatch.setattr(CaveAgent, "__init__", init)
    monkeypatch.setattr(CaveAgent, "run", run_and_keep)


def run_example(path: Path, model: Model, monkeypatch: pytest.MonkeyPatch) -> ExampleRun:
    """Run the script at *path* as `__main__` with *model* standing in for hosted models."""
    run = ExampleRun()
    substitute_models(monkeypatch, model, run)
    record_agents(monkeypatch, run)
    run.namespace = runpy.run_path(str(path), run_name="__main__")
    return run
