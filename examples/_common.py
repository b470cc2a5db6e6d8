"""Shared bits for the examples: pick a model, print events with who is acting.

Each example runs offline with a `ScriptedModel` (recorded replies, live code).
Set `CAVE_MODEL` to a litellm model id (and `CAVE_API_BASE` for an
OpenAI-compatible server, `CAVE_API_KEY` if it needs a key) to run it with a
real model instead, e.g.:

    CAVE_MODEL=openai/qwen2.5-coder-1.5b-instruct CAVE_API_BASE=http://127.0.0.1:8411/v1 \\
        python examples/skills_demo.py
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from cave_tui.agent import events as ev  # noqa: E402
from cave_tui.models import Model, ScriptedModel, model_from_spec  # noqa: E402
from cave_tui.models.base import Message, StreamItem  # noqa: E402


def real_model() -> Model | None:
    """The model named by CAVE_MODEL (and CAVE_API_BASE), or None to use the script."""
    spec = os.environ.get("CAVE_MODEL")
    if not spec:
        return None
    api_base = os.environ.get("CAVE_API_BASE")
    kwargs: dict[str, Any] = {"temperature": 0}
    key = os.environ.get("CAVE_API_KEY")
    if key is None and api_base and not os.environ.get("OPENAI_API_KEY"):
        key = "local"  # a local OpenAI-compatible server wants some key, any key
    if key is not None:
        kwargs["api_key"] = key
    return model_from_spec(spec, api_base=api_base, **kwargs)


def pick_model(script: list[Any]) -> Model:
    return real_model() or ScriptedModel(script)


class ScriptWithSummaries(Model):
    """A scripted agent whose summary requests (compaction) come from a second script."""

    model_id = "scripted"

    def __init__(self, replies: list[Any], summaries: list[Any]) -> None:
        self.agent = ScriptedModel(replies)
        self.summaries = ScriptedModel(summaries)

    def stream(self, messages: list[Message], **kwargs: Any) -> AsyncIterator[StreamItem]:
        from cave_tui.agent.summarizer import SUMMARY_SYSTEM

        if messages and messages[0]["content"] == SUMMARY_SYSTEM:
            return self.summaries.stream(messages, **kwargs)
        return self.agent.stream(messages, **kwargs)


def show(event: ev.Event) -> None:
    """One line per event, prefixed with the acting agent (sub-agents included)."""
    who = f"[{event.agent}] " if event.agent else ""
    kind = event.type
    if kind is ev.EventType.TEXT:
        return
    if kind is ev.EventType.CODE:
        code = "\n    ".join(getattr(event, "code", event.content).rstrip().splitlines())
        print(f"{who}step {event.step} code:\n    {code}")
    elif kind in (ev.EventType.EXECUTION_OUTPUT, ev.EventType.EXECUTION_ERROR):
        body = "\n    ".join(
            getattr(event, "observation", event.content).split("\n\nNamespace")[0].splitlines()[:40]
        )
        print(f"{who}result:\n    {body}")
    elif kind is ev.EventType.USAGE:
        if event.content == "compaction":
            print(f"{who}summariser call: {event.prompt_tokens:,} prompt tokens")
    elif kind in (ev.EventType.STEP, ev.EventType.USER):
        if kind is ev.EventType.USER:
            print(f"{who}> {event.content}")
    else:
        print(f"{who}{kind.value}: {event.content}")
