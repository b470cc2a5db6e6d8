"""`LiteLLMModel`: any provider litellm knows, streamed, with exact usage and retries.

litellm is imported on the first call, never at `import cave_tui`: it takes seconds and
fetches a price map from the network at import unless `LITELLM_LOCAL_MODEL_COST_MAP` is set,
which we set. Retries, stall limits and usage are `ChatStreamModel`'s (chat_stream.py);
litellm's and the OpenAI client's own retries are switched off so they never stack.
OpenAI-compatible endpoints take the lighter `OpenAIHTTPModel` by default (routing.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from typing import Any

from cave_tui.models.base import (
    FIRST_TOKEN_TIMEOUT,
    STALL_RETRIES,
    STREAM_IDLE_TIMEOUT,
    Message,
    Usage,
)
from cave_tui.models.chat_stream import (
    CLOSE_TIMEOUT,
    MAX_RETRY_AFTER,
    ChatStreamModel,
    Chunk,
    WholeReply,
    declared_output_cap,
    retry_after_seconds,
    usage_from,
)
from cave_tui.models.credentials import Credentials, litellm_argument
from cave_tui.models.endpoints import key_may_go, resolved_endpoint, withhold_keys
from cave_tui.models.failures import CallTarget, provider_target

__all__ = [
    "CLOSE_TIMEOUT",
    "MAX_RETRY_AFTER",
    "LiteLLMModel",
    "import_litellm",
    "retry_after_seconds",
]

_usage_from = usage_from  # its old name here


def import_litellm() -> Any:
    """Import litellm quietly and offline (the local price map, no debug banner)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


class _LiteLLMChunks:
    """litellm's stream of chunk objects, read as `Chunk`s."""

    def __init__(self, response: Any) -> None:
        self._response = response
        self._chunks = response.__aiter__()

    async def __anext__(self) -> Chunk:
        chunk = await self._chunks.__anext__()
        text = finish = None
        choices = getattr(chunk, "choices", None) or []
        if choices:
            choice = choices[0]
            delta = getattr(choice, "delta", None)
            text = getattr(delta, "content", None) if delta is not None else None
            finish = getattr(choice, "finish_reason", None) or None
        return Chunk(text or None, finish, usage_from(getattr(chunk, "usage", None)))

    async def aclose(self) -> None:
        close = getattr(self._response, "aclose", None)
        if close is not None:
            await close()


class LiteLLMModel(ChatStreamModel):
    """A model behind litellm. Extra keyword arguments go to `litellm.acompletion`.

    The positional order is upstream CaveAgent's, `(model_id, base_url, api_key)`,
    and its `custom_llm_provider=...` goes to litellm like any extra argument.
    `api_base=` is the same as `base_url=` (litellm's name; cave's callers use it).
    `credentials=` (the app's, taken out of the environment) supply the key litellm would
    have read from the environment, per call; without them litellm reads the environment.
    Timeouts and stalls: see `ChatStreamModel`.
    """

    priced = True

    def __init__(
        self,
        model_id: str,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        api_base: str | None = None,
        stream: bool = True,
        max_retries: int = 5,
        retry_initial: float = 0.5,
        retry_max: float = 8.0,
        request_timeout: float = FIRST_TOKEN_TIMEOUT,
        credentials: Credentials | None = None,
        first_token_timeout: float | None = None,
        stream_idle_timeout: float | None = STREAM_IDLE_TIMEOUT,
        stall_retries: int = STALL_RETRIES,
        filters_asynchronously: bool = False,
        max_output_tokens: int | None = None,  # 0.8's: the cap per reply
        **litellm_kwargs: Any,
    ) -> None:
        # Upstream 0.8's switch for endpoints that send content-filter verdicts after the
        # content. cave runs a cell only once its reply has ended, so it changes nothing.
        self.filters_asynchronously = filters_asynchronously
        if base_url is not None and api_base is not None and base_url != api_base:
            raise ValueError(f"base_url={base_url!r} and api_base={api_base!r} disagree")
        super().__init__(
            model_id,
            api_base=base_url if base_url is not None else api_base,
            api_key=api_key,
            stream=stream,
            max_retries=max_retries,
            retry_initial=retry_initial,
            retry_max=retry_max,
            request_timeout=request_timeout,
            credentials=credentials,
            first_token_timeout=first_token_timeout,
            stream_idle_timeout=stream_idle_timeout,
            stall_retries=stall_retries,
        )
        self.litellm_model = model_id  # the id litellm is given (a subclass may route it)
        self.litellm_kwargs = self.kwargs = litellm_kwargs  # `kwargs`: upstream's name
        self.max_output_tokens = declared_output_cap(max_output_tokens, litellm_kwargs)

    def _request(
        self, messages: list[Message], stream: bool, extra: dict[str, Any]
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.litellm_model,
            "messages": messages,
            "stream": stream,
            "timeout": self.http_timeout,
            # Retries are ours alone: switch off litellm's and the OpenAI client's.
            "num_retries": 0,
            "max_retries": 0,
        }
        if stream:
            kwargs["stream_options"] = {"include_usage": True}
        if self.api_key is not None:
            kwargs["api_key"] = self.api_key
        if self.api_base is not None:
            kwargs["api_base"] = self.api_base
        kwargs.update(self.__dict__.get("_credential_kwargs") or {})  # set by `_target`
        kwargs.update(self.litellm_kwargs)
        kwargs.update(extra)
        # The one place a key is kept from a server (endpoints.py); the environment is read
        # again per request, as litellm reads it (a base URL set since the first call counts).
        target = self.__dict__.get("_call_target") or self._target(import_litellm())
        now = resolved_endpoint(target.provider, self.api_base, None)
        if target.key_withheld or not key_may_go(now, self.api_base) or self._keyless(kwargs):
            withhold_keys(kwargs)
        if "stop" in extra and not self._supports("stop"):
            del kwargs["stop"]  # e.g. OpenAI's reasoning models refuse stop sequences
        return kwargs

    def _keyless(self, kwargs: dict[str, Any]) -> bool:
        """True when the call goes to a URL the user named and no key is held for it (none
        given, held or in the environment): a local server that needs none. The client is
        given a placeholder (the OpenAI SDK will not start without one) and sends no key; a
        server that wants one answers 401, named with the variable to set."""
        if not self.api_base or "api_key" in kwargs:
            return False
        target = self.__dict__.get("_call_target")
        missing = target.key_variables if target is not None else ()
        return any(litellm_argument(n) == "api_key" and not os.environ.get(n) for n in missing)

    def _supports(self, param: str) -> bool:
        """Whether litellm knows this model to accept *param* (unknown models: assume yes)."""
        cache = self.__dict__.setdefault("_supported", {})
        if param not in cache:
            try:
                params = import_litellm().get_supported_openai_params(
                    model=self.litellm_model,
                    custom_llm_provider=self.litellm_kwargs.get("custom_llm_provider"),
                )
            except Exception:
                params = None
            cache[param] = params is None or param in params
        return cache[param]

    def _target(self, litellm: Any) -> CallTarget:
        """The model, provider and endpoint calls go to (raises `ModelError` for an unknown
        model before any request is made)."""
        target = self.__dict__.get("_call_target")
        if target is None:
            provider = self.litellm_kwargs.get("custom_llm_provider")
            target = provider_target(
                litellm,
                self.litellm_model,
                self.api_base,
                key_given=bool(self.api_key),
                custom_llm_provider=provider,
            )
            if not key_may_go(target.endpoint, self.api_base):  # loopback, not named by the user
                target = dataclasses.replace(target, key_variables=(), key_withheld=True)
            elif self.credentials and not self.api_key:  # the keys litellm misses, if held
                held = self.credentials
                self.__dict__["_credential_kwargs"] = held.litellm_kwargs(target.key_variables)
                missing = tuple(k for k in target.key_variables if k not in held)
                target = dataclasses.replace(target, key_variables=missing)
            self.__dict__["_call_target"] = target
        return target

    async def _prepare(self) -> CallTarget:
        litellm = await asyncio.to_thread(import_litellm)  # seconds on the first call
        self.__dict__["_litellm"] = litellm
        return self._target(litellm)

    async def _open_stream(
        self, messages: list[Message], extra: dict[str, Any], target: CallTarget
    ) -> _LiteLLMChunks:
        litellm = self.__dict__["_litellm"]
        return _LiteLLMChunks(await litellm.acompletion(**self._request(messages, True, extra)))

    async def _complete_request(
        self, messages: list[Message], extra: dict[str, Any], target: CallTarget
    ) -> WholeReply:
        litellm = self.__dict__["_litellm"]
        response = await litellm.acompletion(**self._request(messages, False, extra))
        choice = response.choices[0]
        text = getattr(choice.message, "content", None) or ""
        usage = usage_from(getattr(response, "usage", None))
        return WholeReply(text, choice.finish_reason, usage, raw=response)

    def cost(self, usage: Usage) -> float | None:
        """USD estimate from litellm's price map, or None when the model is unknown."""
        litellm = import_litellm()
        try:
            prompt_cost, completion_cost = litellm.cost_per_token(
                model=self.litellm_model,
                custom_llm_provider=self.litellm_kwargs.get("custom_llm_provider"),
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
            )
        except Exception:
            return None
        return float(prompt_cost + completion_cost)
