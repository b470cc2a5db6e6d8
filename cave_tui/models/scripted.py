"""`ScriptedModel`: a model that replies from a script, for tests, demos and replay."""

from __future__ import annotations

import copy
import re
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

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

Reply = str | Callable[[list[Message]], str] | BaseException | dict[str, Any]
_CHUNK = re.compile(r"\S+\s*|\s+")


class ScriptExhaustedError(ModelError):
    """The script has no reply left for this request."""

    def __init__(self, used: int) -> None:
        super().__init__(
            f"ScriptedModel ran out of replies: it had {used} and was asked for reply "
            f"#{used + 1}. Add more replies to the script.",
            kind="script_exhausted",
        )


class ScriptedModel(Model):
    """Replies with the given strings (or callables of the messages) in order.

    A reply may also be an exception (raised for that request) or a dict
    ``{"text": ..., "finish_reason": "length"}`` to script a truncated reply.
    Every request's messages are recorded in `.requests`; usage is counted with
    the cl100k tokenizer, so it is deterministic for a given conversation.
    """

    def __init__(
        self,
        responses: Sequence[Reply],
        model_id: str = "scripted",
        *,
        chunk_words: int = 4,
    ) -> None:
        self.responses = list(responses)
        self.model_id = model_id
        self.requests: list[list[Message]] = []
        self.options: list[dict[str, Any]] = []  # the keyword options of each request
        self.chunk_words = max(1, chunk_words)
        self._index = 0

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """Load a YAML list of replies (strings, or mappings with `text`/`finish_reason`)."""
        import yaml

        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ValueError(f"script file not found: {path}") from None
        except yaml.YAMLError as exc:
            raise ValueError(f"script file {path} is not valid YAML: {exc}") from None
        if isinstance(data, dict) and "replies" in data:
            data = data["replies"]
        if not isinstance(data, list) or not all(isinstance(r, str | dict) for r in data):
            raise ValueError(f"script file {path} must hold a YAML list of replies")
        return cls(data, model_id=f"scripted:{path.name}")

    @property
    def remaining(self) -> int:
        return len(self.responses) - self._index

    def _next_reply(self, messages: list[Message]) -> tuple[str, str]:
        if self._index >= len(self.responses):
            raise ScriptExhaustedError(len(self.responses))
        reply = self.responses[self._index]
        self._index += 1
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            return str(reply(messages)), "stop"
        if isinstance(reply, dict):
            return str(reply.get("text", "")), str(reply.get("finish_reason", "stop"))
        return reply, "stop"

    async def stream(self, messages: list[Message], **kwargs: Any) -> AsyncIterator[StreamItem]:
        self.requests.append(copy.deepcopy(messages))
        self.options.append(dict(kwargs))
        text, finish = self._next_reply(messages)
        words = _CHUNK.findall(text)
        for i in range(0, len(words), self.chunk_words):
            yield TextDelta("".join(words[i : i + self.chunk_words]))
        prompt = count_messages(messages)
        completion = count_text(text)
        yield Completion(
            finish_reason=finish,
            usage=Usage(prompt, completion, prompt + completion, model_calls=1),
        )
