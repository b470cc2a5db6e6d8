"""Upstream's `cave_agent.models.openai` path for `OpenAIServerModel` (see openai_model)."""

from cave_tui.models.openai_model import OpenAIServerModel

__all__ = ["OpenAIServerModel"]
