"""Provider exceptions as `ModelError`s: what a retry can fix, and what it cannot.

Transient failures (timeouts, 408/429/5xx, dropped connections) are worth retrying.
The rest fail at once, with a message that names the model and the endpoint and says
what to do: a missing or refused API key, a refused connection, a host name that does
not resolve, a 404 or a model litellm does not know. The decision reads exception types
along the cause chain and HTTP statuses (litellm reports a refused connection or a
missing key as a "500 internal server error"), never the message text; only the
context-overflow and billing checks read text, as no status marks them (OpenAI reports
an exhausted quota as a 429, which is otherwise transient). Upstream 0.8's predicates
`is_context_length_exceeded` and `is_billing_exhausted` are these checks.
"""

from __future__ import annotations

import re
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from cave_tui.models.base import (
    ContextOverflowError,
    ErrorKind,
    ModelError,
    ProviderBillingError,
)
from cave_tui.models.endpoints import WITHHELD_HINT, resolved_endpoint

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 521, 522, 524, 529})
_OVERFLOW = re.compile(
    r"context[_ ]length|context window|maximum context|exceeds the available context size|"
    r"too many tokens|prompt is too long|input is too long|"
    r"超过最大长度|超出最大长度|上下文长度",  # Chinese providers' "exceeds the maximum length"
    re.IGNORECASE,
)
_BILLING = re.compile(
    r"insufficient[_ ]quota|exceeded your current quota|billing hard limit|"
    r"insufficient credits|credits (?:have been )?exhausted|no usable credits|"
    r"credit balance (?:is )?too low|insufficient[_ ]balance|balance is not enough|"
    r"payment required|out of funds",
    re.IGNORECASE,
)
_TRANSIENT_NAMES = frozenset(
    {
        "RateLimitError",
        "APIConnectionError",
        "Timeout",
        "APITimeoutError",
        "InternalServerError",
        "ServiceUnavailableError",
        "BadGatewayError",
        "ConnectError",
        "ReadError",
        "RemoteProtocolError",
        "ReadTimeout",
        "MidStreamFallbackError",
    }
)
BASE_URL_HINT = "an OpenAI-compatible base URL usually ends in /v1"


@dataclass(frozen=True)
class CallTarget:
    """What a failed call was aimed at, to name in the message."""

    model: str = ""
    endpoint: str | None = None  # the base URL; None: the provider's default
    provider: str | None = None
    key_variables: tuple[str, ...] = ()  # where litellm looks for the key (OPENAI_API_KEY…)
    key_withheld: bool = False  # a loopback server the user did not name (endpoints.py)

    @property
    def where(self) -> str:
        if self.endpoint:
            return self.endpoint
        return f"the {self.provider} API" if self.provider else "the provider's API"

    @property
    def for_model(self) -> str:
        return f" for model {self.model}" if self.model else ""

    @property
    def key_hint(self) -> str:
        if self.key_withheld:
            return f"note that no API key was sent: {WITHHELD_HINT}"
        if self.key_variables:
            return "set " + " or ".join(self.key_variables) + " in the environment"
        return "check the API key"


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an exception carries, if any."""
    for attr in ("status_code", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int):
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def causes(exc: BaseException) -> Iterator[BaseException]:
    """*exc* and the exceptions it was raised from or while handling, outermost first."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _detail(exc: BaseException) -> str:
    text = str(getattr(exc, "message", None) or exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return first[:300]


def _dropped(exc: BaseException, status: int | None) -> bool:
    """A connection that dropped or timed out with no HTTP answer (Python's own
    `ConnectionError` / `TimeoutError`, e.g. a reset or an SSE connect that failed)."""
    return status is None and isinstance(exc, ConnectionError | TimeoutError)


def _is_client_setup_error(exc: BaseException) -> bool:
    """The OpenAI client refused to start (no API key): its base `OpenAIError` itself."""
    openai = sys.modules.get("openai")
    base = getattr(openai, "OpenAIError", None)
    return isinstance(base, type) and type(exc) is base


def connection_refused(target: CallTarget) -> ModelError:
    """Nothing listens where *target* points: a CONNECTION error naming the URL and model."""
    return ModelError(
        f"connection refused at {target.where}{target.for_model}: nothing listens there. "
        "Is the server running, and is --api-base right?",
        kind=ErrorKind.CONNECTION,
    )


def _fail_fast(exc: BaseException, target: CallTarget) -> ModelError | None:
    """A `ModelError` for a cause no retry can fix, found along the cause chain."""
    for link in causes(exc):
        if isinstance(link, ConnectionRefusedError):
            return connection_refused(target)
        if isinstance(link, socket.gaierror):
            return ModelError(
                f"cannot connect to {target.where}{target.for_model}: its host name "
                "does not resolve. Check --api-base (and the network).",
                kind=ErrorKind.CONNECTION,
            )
        if _is_client_setup_error(link):
            return ModelError(
                f"no API key{target.for_model}: {target.key_hint} "
                f"(or pass api_key=). The client said: {_detail(link)}",
                kind=ErrorKind.AUTH,
            )
    return None


def is_context_length_exceeded(error: BaseException) -> bool:
    """The provider rejected the prompt as longer than its context window (or as a payload
    too large, HTTP 413, as upstream 0.8 reads it)."""
    return (
        isinstance(error, ContextOverflowError)
        or type(error).__name__ == "ContextWindowExceededError"
        or getattr(error, "code", None) == "context_length_exceeded"
        or status_of(error) == 413  # payload too large: the prompt, for a model API
        or bool(_OVERFLOW.search(str(error)))
    )


def is_billing_exhausted(error: BaseException) -> bool:
    """The provider's account is out of credit or quota (402, or a quota message)."""
    return (
        isinstance(error, ProviderBillingError)
        or status_of(error) == 402
        or getattr(error, "code", None) == "insufficient_quota"
        or bool(_BILLING.search(str(error)))
    )


def classify(exc: BaseException, target: CallTarget | None = None) -> ModelError:
    """Map a provider exception to a `ModelError` whose kind says whether to retry.

    With *target*, the messages of errors that fail fast name the model and the endpoint.
    """
    if isinstance(exc, ModelError):
        return exc
    name = type(exc).__name__
    status = status_of(exc)
    message = f"{name}: {exc}"
    if is_context_length_exceeded(exc):
        return ContextOverflowError(message, status=status)
    if is_billing_exhausted(exc):
        return ProviderBillingError(message, status=status)
    target = target or CallTarget()
    if (fast := _fail_fast(exc, target)) is not None:
        return fast
    if status in (401, 403) or name in {"AuthenticationError", "PermissionDeniedError"}:
        message = (
            f"{target.where} refused the credentials{target.for_model} "
            f"(HTTP {status}): {_detail(exc)}. To fix it, {target.key_hint}."
        )
        return ModelError(message, kind=ErrorKind.AUTH, status=status)
    if status == 404 or name == "NotFoundError":
        message = (
            f"{target.where} answered 404 (not found){target.for_model}: "
            f"{_detail(exc)}. Check --model and --api-base ({BASE_URL_HINT})."
        )
        return ModelError(message, kind=ErrorKind.NOT_FOUND, status=status)
    if status in RETRYABLE_STATUS or name in _TRANSIENT_NAMES or _dropped(exc, status):
        return ModelError(message, kind=ErrorKind.TRANSIENT, status=status)
    if status in (400, 413, 422) or name == "BadRequestError":
        return ModelError(message, kind=ErrorKind.BAD_REQUEST, status=status)
    return ModelError(message, kind=ErrorKind.ERROR, status=status)


def unknown_model(model: str, exc: BaseException) -> ModelError:
    """litellm cannot tell which provider serves *model*."""
    return ModelError(
        f"unknown model {model!r}: litellm cannot tell which provider serves it "
        "(write it as provider/name, e.g. openai/gpt-4o-mini, or openai/NAME with --api-base "
        f"for an OpenAI-compatible server). litellm said: {_detail(exc)}",
        kind=ErrorKind.NOT_FOUND,
    )


def provider_target(
    litellm: Any, model: str, api_base: str | None, *, key_given: bool = False, **kwargs: Any
) -> CallTarget:
    """The `CallTarget` of a litellm model id: its provider, endpoint and, unless a key was
    given, the environment variables litellm misses a key in.

    Raises the `ModelError` of `unknown_model` when litellm does not know the model.
    """
    try:
        _, provider, _, default_base = litellm.get_llm_provider(model, **kwargs)
    except Exception as exc:
        raise unknown_model(model, exc) from exc
    keys: tuple[str, ...] = ()
    if not key_given:
        try:
            found = litellm.validate_environment(model=model, api_base=api_base)
            keys = tuple(str(k) for k in found.get("missing_keys") or ())
        except Exception:
            pass
    return CallTarget(model, resolved_endpoint(provider, api_base, default_base), provider, keys)
