"""Models: what turns a conversation into the next reply (litellm, or a script)."""

from __future__ import annotations

from typing import Any

from cave_tui.models.base import (
    Completion,
    ContextOverflowError,
    Message,
    Model,
    ModelError,
    RetryNotice,
    StreamItem,
    TextDelta,
    Usage,
)
from cave_tui.models.scripted import ScriptedModel, ScriptExhaustedError

__all__ = [
    "Completion",
    "ContextOverflowError",
    "LiteLLMModel",
    "Message",
    "Model",
    "ModelError",
    "RetryNotice",
    "ScriptExhaustedError",
    "ScriptedModel",
    "StreamItem",
    "TextDelta",
    "Usage",
    "model_from_spec",
]


def __getattr__(name: str) -> Any:
    if name == "LiteLLMModel":
        from cave_tui.models.litellm_model import LiteLLMModel

        return LiteLLMModel
    raise AttributeError(f"module 'cave_tui.models' has no attribute {name!r}")


def model_from_spec(spec: str, api_base: str | None = None, **kwargs: Any) -> Model:
    """Build a model from a command-line spec: `scripted:FILE` or any litellm model id."""
    if spec.startswith("scripted:"):
        return ScriptedModel.from_file(spec.removeprefix("scripted:"))
    from cave_tui.models.litellm_model import LiteLLMModel

    return LiteLLMModel(spec, api_base=api_base, **kwargs)
