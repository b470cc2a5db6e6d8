"""`LocalModel`: the embedded model, served by a llama.cpp process cave owns, reached through
the same client as any OpenAI-compatible server (`OpenAIHTTPModel`; litellm when forced)."""

from __future__ import annotations

import asyncio
import atexit
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from cave_tui.models.base import (
    Completion,
    ErrorKind,
    Message,
    Model,
    ModelError,
    StreamItem,
    TextDelta,
    rate,
)
from cave_tui.models.local.server import LocalServer, LocalServerError
from cave_tui.models.local.weights import Progress, WeightsError, find_weights
from cave_tui.models.routing import ModelClient

if TYPE_CHECKING:
    from cave_tui.models.chat_stream import ChatStreamModel


class LocalModel(Model):
    """A GGUF model served on loopback for this cave; started at the first call, again after
    a crash, stopped when cave ends. `LocalModel.create(gguf=None)` picks the weights."""

    bounds_own_stream: ClassVar[bool] = True  # its HTTP client does; starting it takes long
    continues_reply: bool = True  # llama.cpp continues a last assistant message (prefill)

    def __init__(
        self, server: LocalServer, *, client: ModelClient = ModelClient.OPENAI, **kwargs: Any
    ) -> None:
        self.server = server
        self.client = client  # which library calls the server (routing.py)
        self.alias = server.weights.alias
        self.model_id = f"openai/{self.alias}"
        self.context_size = server.context_size  # the compactor's window
        self.tokens_per_second: float | None = None  # generation speed of the last call
        self._kwargs = kwargs
        self._warming: asyncio.Task[str] | None = None
        atexit.register(server.stop)

    @classmethod
    def create(
        cls,
        gguf: str | None = None,
        *,
        log_path: Path | None = None,
        progress: Progress | None = None,
        client: ModelClient = ModelClient.OPENAI,
        threads: int = 0,
        **kwargs: Any,
    ) -> LocalModel:
        """The model for *gguf* (a path or hf:OWNER/REPO/FILE), else the bundled one, served
        with *threads* (0: every core).

        Raises `WeightsError` with what to do when there are no usable weights.
        """
        weights = find_weights(gguf, progress)
        server = LocalServer(weights, log_path=log_path, threads=threads or None)
        return cls(server, client=client, **kwargs)

    @property
    def label(self) -> str:
        """`local:ALIAS (embedded[, N tok/s])`, for status lines."""
        speed = f", {rate(self.tokens_per_second)} tok/s" if self.tokens_per_second else ""
        return f"local:{self.alias} (embedded{speed})"

    @property
    def api_base(self) -> str | None:
        return self.server.base_url if self.server.alive else None

    async def stream(self, messages: list[Message], **kwargs: Any) -> AsyncIterator[StreamItem]:
        kwargs.setdefault("temperature", 0)  # how cave's prompts were tuned on small models
        try:
            base = await self.server.ensure_running()
        except LocalServerError as exc:
            raise ModelError(str(exc), kind=ErrorKind.LOCAL_SERVER) from None
        inner = self._inner(base)
        first_text: float | None = None
        try:
            async for item in inner.stream(messages, **kwargs):
                if isinstance(item, TextDelta) and first_text is None:
                    first_text = time.monotonic()
                elif isinstance(item, Completion):
                    took = time.monotonic() - (first_text or time.monotonic())
                    if item.usage.completion_tokens > 1 and took > 0:
                        self.tokens_per_second = (item.usage.completion_tokens - 1) / took
                    usage = item.usage  # the prompt state is saved before the answer goes on
                    await self.server.save_prompt(usage.prompt_tokens, usage.cached_tokens)
                yield item
        except ModelError as exc:
            why = self.server.died()
            if why is None:
                raise
            raise ModelError(
                f"the local model server stopped ({why}); your next message starts it again. "
                + self.server.log_tail(),
                kind=ErrorKind.LOCAL_SERVER,
            ) from exc

    def _inner(self, base: str) -> ChatStreamModel:
        """The client of the running server at *base* (it needs no key: "local" is sent)."""
        if self.client is ModelClient.LITELLM:
            from cave_tui.models.litellm_model import LiteLLMModel

            return LiteLLMModel(
                self.model_id, api_base=base, api_key="local", max_retries=1, **self._kwargs
            )
        from cave_tui.models.openai_http import OpenAIHTTPModel

        return OpenAIHTTPModel(
            self.model_id, api_base=base, api_key="local", max_retries=1, **self._kwargs
        )

    def warm_up(self) -> None:
        """Start the server in the background now, so the first message waits less."""
        if self._warming is None or self._warming.done():
            self._warming = asyncio.ensure_future(self.server.ensure_running())
            self._warming.add_done_callback(_quiet)

    def stop(self) -> None:
        """Stop the server now (it also stops by itself when cave ends)."""
        self.server.stop()


def _quiet(task: asyncio.Task[str]) -> None:
    """A failed warm-up is told by the first message's own start; nothing to report here."""
    if not task.cancelled():
        task.exception()


__all__ = ["LocalModel", "LocalServerError", "WeightsError"]
