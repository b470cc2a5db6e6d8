"""cave: a terminal workbench for an LLM agent that works on live Python objects.

The package root stays cheap to import: heavy modules (IPython, litellm, Textual)
load only when the names that need them are first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "AgentResponse",
    "CaveAgent",
    "LiteLLMModel",
    "Model",
    "ModelResponse",
    "OpenAIServerModel",
    "Skill",
    "TokenUsage",
    "__version__",
]

_MODELS = ("LiteLLMModel", "Model", "ModelResponse", "OpenAIServerModel", "TokenUsage")

if TYPE_CHECKING:  # pragma: no cover
    from cave_tui.agent import AgentResponse, CaveAgent
    from cave_tui.models import LiteLLMModel, Model, ModelResponse, OpenAIServerModel, TokenUsage
    from cave_tui.skills import Skill


def __getattr__(name: str) -> Any:
    if name in ("CaveAgent", "AgentResponse"):
        from cave_tui import agent

        return getattr(agent, name)
    if name in _MODELS:  # upstream exports its models at the top level too
        from cave_tui import models

        return getattr(models, name)
    if name == "Skill":
        from cave_tui.skills import Skill

        return Skill
    raise AttributeError(f"module 'cave_tui' has no attribute {name!r}")
