"""Models: what turns a conversation into the next reply (litellm, or a script).

Upstream CaveAgent's names are here too: `OpenAIServerModel`, `LiteLLMModel`,
`Model`, `ModelResponse`, `StreamResponse`, `TokenUsage`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cave_tui.models.adapt import stream_with_idle_timeout
from cave_tui.models.base import (
    Completion,
    ContextOverflowError,
    ErrorKind,
    Message,
    Model,
    ModelError,
    ModelResponse,
    PromptTooLongError,
    ProviderBillingError,
    ProviderError,
    RetryNotice,
    StreamDelta,
    StreamItem,
    StreamStalledError,
    TextDelta,
    TokenUsage,
    Usage,
)
from cave_tui.models.credentials import Credentials
from cave_tui.models.failures import is_billing_exhausted, is_context_length_exceeded
from cave_tui.models.scripted import ScriptedModel, ScriptExhaustedError
from cave_tui.models.stream_response import StreamResponse

__all__ = [
    "Completion",
    "ContextOverflowError",
    "ErrorKind",
    "LiteLLMModel",
    "Message",
    "Model",
    "ModelError",
    "ModelResponse",
    "OpenAIModel",
    "OpenAIServerModel",
    "PromptTooLongError",
    "ProviderBillingError",
    "ProviderError",
    "RetryNotice",
    "ScriptExhaustedError",
    "ScriptedModel",
    "StreamDelta",
    "StreamItem",
    "StreamResponse",
    "StreamStalledError",
    "TextDelta",
    "TokenUsage",
    "Usage",
    "is_billing_exhausted",
    "is_context_length_exceeded",
    "model_from_spec",
    "stream_with_idle_timeout",
]


if TYPE_CHECKING:  # pragma: no cover
    from cave_tui.models.litellm_model import LiteLLMModel
    from cave_tui.models.openai_model import OpenAIServerModel
    from cave_tui.models.openai_model import OpenAIServerModel as OpenAIModel


def __getattr__(name: str) -> Any:
    if name == "LiteLLMModel":
        from cave_tui.models.litellm_model import LiteLLMModel

        return LiteLLMModel
    if name in ("OpenAIServerModel", "OpenAIModel"):  # 0.7's name and 0.8's
        from cave_tui.models.openai_model import OpenAIServerModel

        return OpenAIServerModel
    raise AttributeError(f"module 'cave_tui.models' has no attribute {name!r}")


def model_from_spec(
    spec: str,
    api_base: str | None = None,
    credentials: Credentials | None = None,
    client: str = "auto",
    local_threads: float = 0,
    **kwargs: Any,
) -> Model:
    """A model from a command-line spec: `scripted:FILE`, `local[:GGUF]` (the embedded
    model) or any litellm model id (given *credentials*, its key comes from them, not from
    the environment). *client* (`auto`, `openai`, `litellm`): which library calls it;
    `auto` picks the light OpenAI-compatible client where it serves (routing.py).
    *local_threads*: the embedded model's threads (0: every core).
    Raises ValueError, saying what to do, on a bad spec or client."""
    from cave_tui.models.routing import ModelClient, client_for

    if spec.startswith("scripted:"):
        return ScriptedModel.from_file(spec.removeprefix("scripted:"))
    chosen = client_for(spec, client)
    if spec == "local" or spec.startswith("local:"):  # the embedded model (models/local/)
        from cave_tui.models.local import LocalModel

        gguf = spec.partition(":")[2] or None
        return LocalModel.create(gguf, client=chosen, threads=int(local_threads), **kwargs)
    if chosen is ModelClient.OPENAI:
        from cave_tui.models.openai_http import OpenAIHTTPModel

        return OpenAIHTTPModel(spec, api_base=api_base, credentials=credentials, **kwargs)
    from cave_tui.models.litellm_model import LiteLLMModel

    return LiteLLMModel(spec, api_base=api_base, credentials=credentials, **kwargs)
