"""cave: a terminal workbench for an LLM agent that works on live Python objects.

The package root stays cheap to import: heavy modules (IPython, litellm, Textual)
load only when the names that need them are first used. Every name upstream's
`cave_agent` exports at its top level is here too, under the same name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Name -> the cave_tui module that defines it (imported on first use).
_LAZY = {
    "CaveAgent": "cave_tui.agent",
    "AgentResponse": "cave_tui.agent",
    "Message": "cave_tui.types",
    "MessageRole": "cave_tui.types",
    "EventType": "cave_tui.types",
    "with_display": "cave_tui.display",
    "render_events": "cave_tui.display",
    "render_user_prompt": "cave_tui.display",
    "Model": "cave_tui.models",
    "ModelResponse": "cave_tui.models",
    "TokenUsage": "cave_tui.models",
    "OpenAIServerModel": "cave_tui.models",
    "LiteLLMModel": "cave_tui.models",
    "Runtime": "cave_tui.runtime",
    "IPythonRuntime": "cave_tui.runtime",
    "IPyKernelRuntime": "cave_tui.runtime",
    "Function": "cave_tui.runtime",
    "Variable": "cave_tui.runtime",
    "Type": "cave_tui.runtime",
    "SecurityChecker": "cave_tui.security",
    "SecurityError": "cave_tui.security",
    "SecurityViolation": "cave_tui.security",
    "SecurityRule": "cave_tui.security",
    "ImportRule": "cave_tui.security",
    "FunctionRule": "cave_tui.security",
    "AttributeRule": "cave_tui.security",
    "RegexRule": "cave_tui.security",
    "Skill": "cave_tui.skills",
    "SkillDiscovery": "cave_tui.skills",
    "SkillRegistry": "cave_tui.skills",
    # upstream 0.7's logging names (its stream example imports them)
    "LogLevel": "cave_tui.logger",
    "Logger": "cave_tui.logger",
    # upstream 0.8's names
    "OpenAIModel": "cave_tui.models",
    "RuntimeExecutionError": "cave_tui.runtime",
    "StopReason": "cave_tui.events",
    "StatusType": "cave_tui.events",
    "UserPromptEvent": "cave_tui.events",
    "TextEvent": "cave_tui.events",
    "ThinkingChunkEvent": "cave_tui.events",
    "ThinkingEvent": "cave_tui.events",
    "CodeEvent": "cave_tui.events",
    "ExecutionResultEvent": "cave_tui.events",
    "ExecutionTimeoutEvent": "cave_tui.events",
    "SecurityErrorEvent": "cave_tui.events",
    "StatusEvent": "cave_tui.events",
    "FinalResponseEvent": "cave_tui.events",
    "StoppedEvent": "cave_tui.events",
}

__all__ = [
    "AgentResponse",
    "AttributeRule",
    "CaveAgent",
    "CodeEvent",
    "EventType",
    "ExecutionResultEvent",
    "ExecutionTimeoutEvent",
    "FinalResponseEvent",
    "Function",
    "FunctionRule",
    "IPyKernelRuntime",
    "IPythonRuntime",
    "ImportRule",
    "LiteLLMModel",
    "LogLevel",
    "Logger",
    "Message",
    "MessageRole",
    "Model",
    "ModelResponse",
    "OpenAIModel",
    "OpenAIServerModel",
    "RegexRule",
    "Runtime",
    "RuntimeExecutionError",
    "SecurityChecker",
    "SecurityError",
    "SecurityErrorEvent",
    "SecurityRule",
    "SecurityViolation",
    "Skill",
    "SkillDiscovery",
    "SkillRegistry",
    "StatusEvent",
    "StatusType",
    "StopReason",
    "StoppedEvent",
    "TextEvent",
    "ThinkingChunkEvent",
    "ThinkingEvent",
    "TokenUsage",
    "Type",
    "UserPromptEvent",
    "Variable",
    "__version__",
    "render_events",
    "render_user_prompt",
    "with_display",
]

if TYPE_CHECKING:  # pragma: no cover
    from cave_tui.agent import AgentResponse, CaveAgent
    from cave_tui.display import render_events, render_user_prompt, with_display
    from cave_tui.events import (
        CodeEvent,
        ExecutionResultEvent,
        ExecutionTimeoutEvent,
        FinalResponseEvent,
        SecurityErrorEvent,
        StatusEvent,
        StatusType,
        StoppedEvent,
        StopReason,
        TextEvent,
        ThinkingChunkEvent,
        ThinkingEvent,
        UserPromptEvent,
    )
    from cave_tui.logger import Logger, LogLevel

    # Leaf modules, not the packages: the kernel package imports this root for its version.
    from cave_tui.models.base import Model, ModelResponse, TokenUsage
    from cave_tui.models.litellm_model import LiteLLMModel
    from cave_tui.models.openai_model import OpenAIServerModel
    from cave_tui.models.openai_model import OpenAIServerModel as OpenAIModel
    from cave_tui.runtime.base import Runtime
    from cave_tui.runtime.errors import RuntimeExecutionError
    from cave_tui.runtime.ipython import IPythonRuntime
    from cave_tui.runtime.items import Function, Type, Variable
    from cave_tui.security import (
        AttributeRule,
        FunctionRule,
        ImportRule,
        RegexRule,
        SecurityChecker,
        SecurityError,
        SecurityRule,
        SecurityViolation,
    )
    from cave_tui.skills import Skill, SkillDiscovery, SkillRegistry
    from cave_tui.types import EventType, Message, MessageRole


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cave_tui' has no attribute {name!r}")
    from importlib import import_module

    try:
        return getattr(import_module(module), name)
    except AttributeError:
        raise AttributeError(
            f"module 'cave_tui' has no attribute {name!r} (not yet in {module})"
        ) from None


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
