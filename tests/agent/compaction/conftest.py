"""A model that answers the agent and the summariser from two separate scripts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from cave_tui.agent.summarizer import SUMMARY_SYSTEM
from cave_tui.models import Model, ScriptedModel
from cave_tui.models.base import Message, StreamItem


class RoutingModel(Model):
    """Summary requests (recognised by their system prompt) go to *summaries*."""

    model_id = "routing"

    def __init__(self, agent: list[Any], summaries: list[Any] | None = None) -> None:
        self.agent = ScriptedModel(agent)
        self.summaries = ScriptedModel(summaries or [])

    def stream(self, messages: list[Message], **kwargs: Any) -> AsyncIterator[StreamItem]:
        if messages and messages[0]["content"] == SUMMARY_SYSTEM:
            return self.summaries.stream(messages, **kwargs)
        return self.agent.stream(messages, **kwargs)


def numbers(start: int, count: int = 150) -> str:
    """Text of about 2 tokens per number: easy to size."""
    return " ".join(str(i) for i in range(start, start + count))


def summary_reply(text: str) -> str:
    scratch = "<analysis>\nSCRATCHPAD that must be discarded.\n</analysis>"
    return f"{scratch}\n<summary>\n{text}\n</summary>"
