"""Upstream's `cave_agent.models.openai` path: `OpenAIServerModel` (0.7) and its 0.8 name
`OpenAIModel`, the same class (see openai_model)."""

from cave_tui.models.openai_model import OpenAIServerModel

OpenAIModel = OpenAIServerModel

__all__ = ["OpenAIModel", "OpenAIServerModel"]
