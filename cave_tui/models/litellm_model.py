"""`LiteLLMModel`: any provider litellm knows, streamed, with exact usage and retries.

litellm is imported on the first call, never at `import cave_tui`: it takes about
3 s and fetches a price map from the network at import unless
`LITELLM_LOCAL_MODEL_COST_MAP` is set, which we set. Retries are ours alone
(litellm's and the OpenAI client's own are switched off) so they never stack.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import AsyncIterator
from email.utils import parsedate_to_datetime
from typing import Any

from tenacity import RetryCallState, Retrying, wait_exponential_jitter

from cave_tui.models.base import (
    FIRST_TOKEN_TIMEOUT,
    STALL_RETRIES,
    STREAM_IDLE_TIMEOUT,
    Completion,
    ErrorKind,
    Message,
    Model,
    ModelError,
    RetryNotice,
    StreamItem,
    StreamStalledError,
    TextDelta,
    Usage,
)
from cave_tui.models.credentials import Credentials, litellm_argument
from cave_tui.models.endpoints import (
    is_loopback,
    kernel_owned,
    key_may_go,
    resolved_endpoint,
    withhold_keys,
)
from cave_tui.models.failures import CallTarget, classify, provider_target
from cave_tui.models.reach import unreachable
from cave_tui.models.tokens import count_messages, count_text

MAX_RETRY_AFTER = 60.0
CLOSE_TIMEOUT = 5.0  # closing a stalled stream's connection


def import_litellm() -> Any:
    """Import litellm quietly and offline (the local price map, no debug banner)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's Retry-After (seconds or HTTP date), if the error carries one."""
    headers: Any = None
    response = getattr(exc, "response", None)
    if response is not None:
        headers = getattr(response, "headers", None)
    if not headers:
        headers = getattr(exc, "litellm_response_headers", None) or getattr(exc, "headers", None)
    if not headers:
        return None
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
    except Exception:
        return None
    if value is None:
        return None
    try:
        return max(0.0, min(float(value), MAX_RETRY_AFTER))
    except ValueError:
        pass
    try:
        import datetime as _dt

        when = parsedate_to_datetime(str(value))
        delta = (when - _dt.datetime.now(when.tzinfo)).total_seconds()
        return max(0.0, min(delta, MAX_RETRY_AFTER))
    except Exception:
        return None


def _usage_from(raw: Any) -> Usage | None:
    if raw is None:
        return None
    get = raw.get if isinstance(raw, dict) else lambda k, d=None: getattr(raw, k, d)
    prompt = get("prompt_tokens", None)
    completion = get("completion_tokens", None)
    if prompt is None and completion is None:
        return None
    prompt = int(prompt or 0)
    completion = int(completion or 0)
    total = int(get("total_tokens", None) or prompt + completion)
    cached = 0
    details = get("prompt_tokens_details", None)
    if details is not None:
        cached_value = (
            details.get("cached_tokens")
            if isinstance(details, dict)
            else getattr(details, "cached_tokens", 0)
        )
        cached = int(cached_value or 0)
    return Usage(prompt, completion, total, model_calls=1, cached_tokens=cached)


class LiteLLMModel(Model):
    """A model behind litellm. Extra keyword arguments go to `litellm.acompletion`.

    The positional order is upstream CaveAgent's, `(model_id, base_url, api_key)`,
    and its `custom_llm_provider=...` goes to litellm like any extra argument.
    `api_base=` is the same as `base_url=` (litellm's name; cave's callers use it).
    `credentials=` (the app's, taken out of the environment) supply the key litellm would
    have read from the environment, per call; without them litellm reads the environment.

    A streamed reply must bring its first text within `first_token_timeout` seconds of the
    request (default: `request_timeout`) and each later chunk within `stream_idle_timeout`
    of the one before (0 or None: no limit); a stall raises `StreamStalledError`. A reply
    that stalls mid-stream is asked again at most `stall_retries` times; a first-token stall
    is not (the same prompt would keep the server as long again).
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
        **litellm_kwargs: Any,
    ) -> None:
        if base_url is not None and api_base is not None and base_url != api_base:
            raise ValueError(f"base_url={base_url!r} and api_base={api_base!r} disagree")
        self.model_id = model_id
        self.litellm_model = model_id  # the id litellm is given (a subclass may route it)
        self.api_key = api_key
        self.credentials = credentials
        self.api_base = self.base_url = base_url if base_url is not None else api_base
        self.use_stream = stream
        self.max_retries = max_retries
        self.request_timeout = request_timeout
        self.first_token_timeout = (
            request_timeout if first_token_timeout is None else first_token_timeout
        )
        self.stream_idle_timeout = stream_idle_timeout
        self.stall_retries = stall_retries
        self.litellm_kwargs = self.kwargs = litellm_kwargs  # `kwargs`: upstream's name
        self._wait = wait_exponential_jitter(
            multiplier=retry_initial, max=retry_max, jitter=retry_initial
        )
        self._retrying = Retrying(wait=self._wait)  # the owner a RetryCallState names

    def _request(
        self, messages: list[Message], stream: bool, extra: dict[str, Any]
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.litellm_model,
            "messages": messages,
            "stream": stream,
            # The HTTP client's own limit: never shorter than the first token's wait.
            "timeout": max(self.request_timeout, self.first_token_timeout or 0.0),
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

    def _delay(self, attempt: int, exc: BaseException) -> float:
        after = retry_after_seconds(exc)
        if after is not None:
            return after
        state = RetryCallState(retry_object=self._retrying, fn=None, args=(), kwargs={})
        state.attempt_number = attempt
        return float(self._wait(state))

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

    async def stream(self, messages: list[Message], **kwargs: Any) -> AsyncIterator[StreamItem]:
        """Stream one reply; retry transient failures, fail at once on the others
        (a missing or refused key, a refused connection, an unknown host or model, 404).
        Until a reply has come, a server on loopback at the URL the user named is first
        asked for a connection (reach.py), before litellm's import of seconds."""
        if self.api_base and not self.__dict__.get("_reached"):
            named = CallTarget(self.model_id, self.api_base)
            if (error := await asyncio.to_thread(unreachable, named)) is not None:
                raise error
        litellm = await asyncio.to_thread(import_litellm)  # seconds on the first call
        target = self._target(litellm)
        attempt = stalls = 0
        while True:
            attempt += 1
            emitted = False
            await self._refuse_a_kernels_server(target)
            try:
                if self.use_stream:
                    async for item in self._stream_once(litellm, messages, kwargs, target):
                        if isinstance(item, TextDelta):
                            emitted = True
                        yield item
                else:
                    async for item in self._complete_once(litellm, messages, kwargs):
                        yield item
                self.__dict__["_reached"] = True
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                error = classify(exc, target)
                if isinstance(error, StreamStalledError):
                    stalls += 1
                    if error.first or stalls > self.stall_retries:
                        raise error from exc
                if error.kind != ErrorKind.TRANSIENT or attempt > self.max_retries:
                    if error.kind == ErrorKind.TRANSIENT:
                        error = ModelError(
                            f"gave up after {attempt} attempts at {target.where}: {error}",
                            kind=ErrorKind.TRANSIENT,
                            status=error.status,
                        )
                    raise error from exc
                delay = self._delay(attempt, exc)
                yield RetryNotice(
                    attempt=attempt, delay=delay, reason=str(error), discard_partial=emitted
                )
                await asyncio.sleep(delay)

    async def _refuse_a_kernels_server(self, target: CallTarget) -> None:
        """Raise `ModelError` when the server this request goes to is a cave kernel's (one
        posing as a model server on loopback), before anything is sent to it."""
        endpoint = self.api_base or resolved_endpoint(target.provider, None, None)
        endpoint = endpoint or target.endpoint
        if is_loopback(endpoint) and await asyncio.to_thread(kernel_owned, endpoint):
            raise ModelError(
                f"refusing to send the conversation to {endpoint}: a cave kernel listens "
                "there (model code posing as a model server); start the real server on "
                "another port, or stop the kernel that holds it",
                kind=ErrorKind.CONNECTION,
            )

    def _stalled(self, target: CallTarget, waited: float, first: bool) -> StreamStalledError:
        where = f"{target.model or self.model_id} at {target.where}"
        if first:
            return StreamStalledError(
                f"{where} sent no reply within {waited:g} s of the request (first-token "
                "timeout; a local model reading a long prompt may need more: "
                "--first-token-timeout)",
                waited=waited,
                first=True,
            )
        return StreamStalledError(
            f"{where} stopped sending mid-reply: nothing for {waited:g} s (stream idle "
            "timeout: --stream-idle-timeout)",
            waited=waited,
            first=False,
        )

    async def _within(self, step: Any, limit: float | None, target: CallTarget, first: bool) -> Any:
        """Await *step*, raising `StreamStalledError` when it takes over *limit* seconds."""
        if limit is None:
            return await step
        try:
            return await asyncio.wait_for(step, max(limit, 0.0))
        except TimeoutError:
            waited = self.first_token_timeout if first and self.first_token_timeout else limit
            raise self._stalled(target, waited, first) from None

    async def _stream_once(
        self,
        litellm: Any,
        messages: list[Message],
        extra: dict[str, Any],
        target: CallTarget | None = None,
    ) -> AsyncIterator[StreamItem]:
        target = target or CallTarget(self.model_id, self.api_base)
        first_by = time.monotonic() + (self.first_token_timeout or 0.0)

        def first_left() -> float | None:
            return first_by - time.monotonic() if self.first_token_timeout else None

        request = litellm.acompletion(**self._request(messages, True, extra))
        response = await self._within(request, first_left(), target, True)
        finish: str | None = None
        usage: Usage | None = None
        parts: list[str] = []
        chunks = response.__aiter__()
        try:
            while True:
                begun = bool(parts)
                limit = (self.stream_idle_timeout or None) if begun else first_left()
                try:
                    chunk = await self._within(chunks.__anext__(), limit, target, not begun)
                except StopAsyncIteration:
                    break
                except StreamStalledError:
                    if finish is not None:
                        break  # finished; only the usage chunk or the close is late
                    raise
                choices = getattr(chunk, "choices", None) or []
                if choices:
                    choice = choices[0]
                    delta = getattr(choice, "delta", None)
                    text = getattr(delta, "content", None) if delta is not None else None
                    if text:
                        parts.append(text)
                        yield TextDelta(text)
                    if getattr(choice, "finish_reason", None):
                        finish = choice.finish_reason
                chunk_usage = _usage_from(getattr(chunk, "usage", None))
                if chunk_usage is not None and (
                    chunk_usage.prompt_tokens or chunk_usage.completion_tokens
                ):
                    usage = chunk_usage
        finally:
            close = getattr(response, "aclose", None)
            if close is not None:
                try:
                    await asyncio.wait_for(close(), CLOSE_TIMEOUT)
                except Exception:
                    pass
        if finish is None:
            # A stream that ends without a finish reason was cut, not finished.
            raise ModelError(
                "the stream ended without a finish reason (connection dropped?)",
                kind=ErrorKind.TRANSIENT,
            )
        reported = usage is not None
        if usage is None:
            prompt = count_messages(messages)
            done = count_text("".join(parts))
            usage = Usage(prompt, done, prompt + done, model_calls=1)
        yield Completion(finish_reason=finish, usage=usage, usage_reported=reported)

    async def _complete_once(
        self, litellm: Any, messages: list[Message], extra: dict[str, Any]
    ) -> AsyncIterator[StreamItem]:
        response = await litellm.acompletion(**self._request(messages, False, extra))
        choice = response.choices[0]
        text = getattr(choice.message, "content", None) or ""
        usage = _usage_from(getattr(response, "usage", None))
        reported = usage is not None
        if usage is None:
            prompt = count_messages(messages)
            done = count_text(text)
            usage = Usage(prompt, done, prompt + done, model_calls=1)
        if text:
            yield TextDelta(text)
        yield Completion(
            finish_reason=choice.finish_reason, usage=usage, usage_reported=reported, raw=response
        )

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
