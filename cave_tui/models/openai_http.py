"""`OpenAIHTTPModel`: an OpenAI-compatible chat endpoint spoken to over httpx, without litellm.

Local servers (llama.cpp, Ollama's /v1, vLLM, LM Studio), OpenAI's own API and the embedded
model take this client (routing.py): httpx imports in under a second where litellm takes
seconds. It keeps every promise of `ChatStreamModel` (retries, stall limits, usage, finish
reason, errors classified as litellm's are) and the key rules of endpoints.py: the key comes
from `api_key=`, else the app's `Credentials`, else `OPENAI_API_KEY`; a loopback server the
user did not name gets none; a named server with no key held is asked with none.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from typing import TYPE_CHECKING, Any

from cave_tui.models.base import (
    FIRST_TOKEN_TIMEOUT,
    STALL_RETRIES,
    STREAM_IDLE_TIMEOUT,
    ErrorKind,
    Message,
    ModelError,
    Usage,
)
from cave_tui.models.chat_stream import (
    ChatStreamModel,
    Chunk,
    WholeReply,
    declared_output_cap,
    usage_from,
)
from cave_tui.models.credentials import Credentials
from cave_tui.models.endpoints import KEY_HEADERS, key_may_go, resolved_endpoint, same_url
from cave_tui.models.failures import CallTarget
from cave_tui.models.tls import tls_context

if TYPE_CHECKING:
    import httpx

KEY_VARIABLE = "OPENAI_API_KEY"
HOSTED = "https://api.openai.com/v1"  # where a call goes when no base URL is set
CONNECT_TIMEOUT = 30.0
PREFIX = "openai/"  # litellm's provider prefix: the server is sent the name after it
# OpenAI's reasoning models refuse stop sequences (the agent cuts the text itself then).
_NO_STOP = re.compile(r"^o\d")


class ServerRefusal(Exception):
    """The server answered with an HTTP error (or an error event mid-stream)."""

    def __init__(self, message: str, status_code: int | None, response: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.response = response  # its headers carry Retry-After


def _refusal(status: int | None, body: bytes | str | dict[str, Any], response: object) -> Exception:
    """A `ServerRefusal` whose text is the server's own error message."""
    payload: object = body
    if isinstance(body, bytes | str):
        try:
            payload = json.loads(body or b"{}")
        except ValueError:
            payload = body.decode(errors="replace") if isinstance(body, bytes) else body
    detail: object = payload
    if isinstance(payload, dict):
        error = payload.get("error", payload)
        detail = error.get("message", error) if isinstance(error, dict) else error
    said = f"HTTP {status}: {detail}" if status is not None else str(detail)
    return ServerRefusal(said[:2000], status, response)


def _chunk_of(event: dict[str, Any]) -> Chunk:
    text = finish = None
    choices = event.get("choices") or []
    if choices and isinstance(choices[0], dict):
        choice = choices[0]
        delta = choice.get("delta") or {}
        text = delta.get("content") if isinstance(delta, dict) else None
        finish = choice.get("finish_reason") or None
    return Chunk(text or None, finish, usage_from(event.get("usage")))


class _ServerSentChunks:
    """The `data:` events of a streamed reply, as `Chunk`s, until `[DONE]` or the end."""

    def __init__(self, client: httpx.AsyncClient, response: httpx.Response) -> None:
        self._client = client
        self._response = response
        self._lines = response.aiter_lines()

    async def __anext__(self) -> Chunk:
        while True:
            line = await self._lines.__anext__()
            if not line.startswith("data:"):
                continue  # blank lines, comments, `event:` names
            data = line[5:].strip()
            if data == "[DONE]":
                raise StopAsyncIteration
            try:
                event = json.loads(data)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("error"):
                raise _refusal(None, event, self._response)
            if isinstance(event, dict):
                return _chunk_of(event)

    async def aclose(self) -> None:
        try:
            await self._response.aclose()
        finally:
            await self._client.aclose()


def _import_httpx() -> None:
    import httpx  # noqa: F401  (imported off the event loop, once)


class OpenAIHTTPModel(ChatStreamModel):
    """A model behind an OpenAI-compatible `/chat/completions`. *model_id* is what the user
    wrote (`openai/NAME` or `gpt-4o`); the server is sent it without `openai/`. Extra keyword
    arguments go into the request body (`temperature=`, `max_tokens=`); `extra_headers=`
    are sent as headers. Timeouts, retries, stalls: `ChatStreamModel`."""

    priced = True  # OpenAI's own API, from litellm's price map; a named server has no price

    def __init__(
        self,
        model_id: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        stream: bool = True,
        max_retries: int = 5,
        retry_initial: float = 0.5,
        retry_max: float = 8.0,
        request_timeout: float = FIRST_TOKEN_TIMEOUT,
        credentials: Credentials | None = None,
        first_token_timeout: float | None = None,
        stream_idle_timeout: float | None = STREAM_IDLE_TIMEOUT,
        stall_retries: int = STALL_RETRIES,
        extra_headers: dict[str, str] | None = None,
        max_output_tokens: int | None = None,  # 0.8's: the cap per reply
        **request_kwargs: Any,
    ) -> None:
        super().__init__(
            model_id,
            api_base=api_base,
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
        self.wire_model = model_id.removeprefix(PREFIX)
        self.extra_headers = dict(extra_headers or {})
        self.request_kwargs = request_kwargs
        self.max_output_tokens = declared_output_cap(max_output_tokens, request_kwargs)

    # --- where and with which key --------------------------------------------------------

    def _endpoint(self) -> str | None:
        """The base URL set (named, or the environment's, read per call); None: OpenAI's."""
        return resolved_endpoint("openai", self.api_base, None)

    def _key(self) -> str | None:
        if self.api_key:
            return self.api_key
        if self.credentials is not None and KEY_VARIABLE in self.credentials:
            return self.credentials.values[KEY_VARIABLE]
        return os.environ.get(KEY_VARIABLE) or None

    def _call_target(self) -> CallTarget:
        endpoint = self._endpoint()
        if not key_may_go(endpoint, self.api_base):  # loopback, not named by the user
            return CallTarget(self.model_id, endpoint, "openai", key_withheld=True)
        missing = () if self._key() else (KEY_VARIABLE,)
        return CallTarget(self.model_id, endpoint, "openai", key_variables=missing)

    async def _prepare(self) -> CallTarget:
        target = self._call_target()
        if target.endpoint is None and target.key_variables:
            raise ModelError(
                f"no API key{target.for_model}: {target.key_hint} (or pass api_key=); "
                "a local server needs none: pass --api-base URL",
                kind=ErrorKind.AUTH,
            )
        await asyncio.to_thread(_import_httpx)  # under a second, off the event loop
        return target

    def _headers(self, target: CallTarget) -> dict[str, str]:
        headers = dict(self.extra_headers)
        # Re-read per request: a base URL set in the environment since counts (endpoints.py).
        withheld = target.key_withheld or not key_may_go(self._endpoint(), self.api_base)
        key = None if withheld else self._key()
        if withheld:
            keyed = {name.lower() for name in KEY_HEADERS}
            headers = {k: v for k, v in headers.items() if k.lower() not in keyed}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _body(self, messages: list[Message], stream: bool, extra: dict[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.wire_model, "messages": messages, "stream": stream}
        if stream:
            body["stream_options"] = {"include_usage": True}
        body.update(self.request_kwargs)
        body.update(extra)
        if "stop" in body and _NO_STOP.match(self.wire_model):
            del body["stop"]
        body.update(body.pop("extra_body", None) or {})
        return body

    def _url(self) -> str:
        return (self._endpoint() or HOSTED).rstrip("/") + "/chat/completions"

    def _client(self) -> httpx.AsyncClient:
        import httpx

        limit = self.http_timeout
        timeout = httpx.Timeout(limit, connect=min(CONNECT_TIMEOUT, limit))
        return httpx.AsyncClient(timeout=timeout, verify=tls_context(self._url()))

    # --- the requests ----------------------------------------------------------------------

    async def _open_stream(
        self, messages: list[Message], extra: dict[str, Any], target: CallTarget
    ) -> _ServerSentChunks:
        client = self._client()
        try:
            request = client.build_request(
                "POST",
                self._url(),
                json=self._body(messages, True, extra),
                headers=self._headers(target),
            )
            response = await client.send(request, stream=True)
            if response.status_code >= 400:
                body = await response.aread()
                await response.aclose()
                raise _refusal(response.status_code, body, response)
        except BaseException:
            await client.aclose()
            raise
        return _ServerSentChunks(client, response)

    async def _complete_request(
        self, messages: list[Message], extra: dict[str, Any], target: CallTarget
    ) -> WholeReply:
        async with self._client() as client:
            response = await client.post(
                self._url(),
                json=self._body(messages, False, extra),
                headers=self._headers(target),
            )
            if response.status_code >= 400:
                raise _refusal(response.status_code, response.content, response)
            payload = response.json()
        choices = payload.get("choices") or [{}]
        choice = choices[0] if isinstance(choices[0], dict) else {}
        message = choice.get("message") or {}
        text = (message.get("content") if isinstance(message, dict) else None) or ""
        return WholeReply(text, choice.get("finish_reason"), usage_from(payload.get("usage")))

    def cost(self, usage: Usage) -> float | None:
        """USD estimate for OpenAI's own API (litellm's price map, imported here only); None
        for a server at a URL (local or self-hosted: no price)."""
        endpoint = self._endpoint()
        if endpoint is not None and not same_url(endpoint, HOSTED):
            return None
        from cave_tui.models.litellm_model import import_litellm

        try:
            prompt_cost, completion_cost = import_litellm().cost_per_token(
                model=self.wire_model,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
            )
        except Exception:
            return None
        return float(prompt_cost + completion_cost)
