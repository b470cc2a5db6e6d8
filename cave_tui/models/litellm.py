"""Upstream's `cave_agent.models.litellm` path for `LiteLLMModel` (see litellm_model)."""

from cave_tui.models.litellm_model import LiteLLMModel

__all__ = ["LiteLLMModel"]
