"""`Extensions`: skills, compaction, sub-agents and event sinks, composed into `CaveAgent`.

The loop calls into what this holds: it sends every event to `sinks`, adds what
`result_hooks` return to a cell's observation, asks `compactor` before each model
call and runs cells through `subagents`, which forwards sub-agents' events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from cave_tui.agent import events as ev
from cave_tui.runtime.base import ExecutionResult

if TYPE_CHECKING:
    from cave_tui.agent.compaction import Compactor
    from cave_tui.agent.subagents import SubAgentHub
    from cave_tui.skills.registry import SkillRegistry
    from cave_tui.skills.runtime_bridge import SkillBridge

T = TypeVar("T")


class Extensions:
    """An agent's add-ons around its loop; `install` sets up skills and compaction."""

    def __init__(self, agent: Any, agent_class: type[Any]) -> None:
        """*agent_class* is what a sub-agent found in *agent*'s runtime is an instance of."""
        from cave_tui.agent.subagents import SubAgentHub
        from cave_tui.skills.registry import SkillRegistry

        self.sinks: list[Callable[[ev.Event], None]] = []
        # Called with each cell's result; each returns text appended to the observation
        # after the output-limit cut (skills deliver their instructions whole this way).
        self.result_hooks: list[Callable[[ExecutionResult], str]] = []
        self.compactor: Compactor | None = None
        self.subagents: SubAgentHub = SubAgentHub(agent, agent_class)
        self.skill_registry: SkillRegistry = SkillRegistry()  # upstream's: filled by skills
        self.skill_bridge: SkillBridge | None = None

    def install(self, agent: Any) -> None:
        """Install *agent*'s skills and compaction when it has them configured."""
        if agent.skills:
            from cave_tui.skills.runtime_bridge import install_skills

            install_skills(agent)
        policy = agent.compaction_policy  # upstream 0.8's `compactor=`: its window and model
        window = policy.context_window if policy is not None else agent.context_window
        if window:
            from cave_tui.agent.compaction import Compactor

            summariser = policy.model if policy is not None else None
            self.compactor = Compactor(agent, window, summary_model=summariser)
            if policy is not None:
                self.compactor.breaker = policy.breaker  # its breaker, which re-closes

    def emit(self, event: ev.Event) -> None:
        """Send *event* to every sink; a failing sink never stops the others or the loop."""
        for sink in self.sinks:
            try:
                sink(event)
            except Exception:
                pass


class Alias(Generic[T]):
    """An agent attribute that is its `extensions`' attribute *name* (read and set):
    upstream-era private names that code written against them still uses."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, agent: Any, owner: type[Any] | None = None) -> T:
        return cast(T, getattr(agent.extensions, self.name))

    def __set__(self, agent: Any, value: T) -> None:
        setattr(agent.extensions, self.name, value)
