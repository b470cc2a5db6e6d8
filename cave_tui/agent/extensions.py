"""`AgentExtensions`: skills, compaction and sub-agents, installed beside `CaveAgent`'s loop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cave_tui.agent import events as ev
from cave_tui.runtime.base import ExecutionResult


class AgentExtensions:
    """The extension half of `CaveAgent` (the loop calls into what this installs)."""

    skills: list[Any]
    context_window: int | None
    _compactor: Any
    _sinks: list[Callable[[ev.Event], None]]
    _result_hooks: list[Callable[[ExecutionResult], str]]

    def _setup_extensions(self, agent_class: type[Any]) -> None:
        """Install skills and compaction when configured; *agent_class* is what a sub-agent
        found in the runtime is an instance of."""
        from cave_tui.agent.subagents import SubAgentHub

        self._subagents = SubAgentHub(self, agent_class)
        from cave_tui.skills.registry import SkillRegistry

        self._skill_registry = SkillRegistry()  # upstream's: filled by install_skills
        if self.skills:
            from cave_tui.skills.runtime_bridge import install_skills

            install_skills(self)
        if self.context_window:
            from cave_tui.agent.compaction import Compactor

            self._compactor = Compactor(self, self.context_window)

    def add_event_sink(self, sink: Callable[[ev.Event], None]) -> None:
        """Also send every event of this agent to *sink* (used to forward sub-agent events)."""
        self._sinks.append(sink)

    @property
    def compactor(self) -> Any:
        """The `Compactor` when `context_window` is set (its breaker, counts), else None."""
        return self._compactor

    def attach_subagent(self, agent: Any, label: str | None = None) -> None:
        """Forward *agent*'s events into this agent's stream while its cells run.

        Agents injected into this agent's runtime are attached automatically.
        """
        self._subagents.attach(agent, label)

    def __cave_describe__(self, name: str) -> str:
        """How this agent reads in another agent's namespace description."""
        from cave_tui.agent.subagents import describe_agent

        return describe_agent(self, name)
