"""`SkillRegistry`: upstream's named store of skills, for code written against it.

Cave's agent takes `skills=[...]` and keeps them in its `SkillBridge`; a registry
can be handed over as `skills=registry.list_skills()`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cave_tui.skills.skill import Skill


class SkillRegistry:
    """Skills by name (a later skill of the same name replaces the earlier one)."""

    def __init__(self) -> None:
        self._skills: dict[str, Skill] = {}

    def add_skill(self, skill: Skill) -> None:
        if not isinstance(skill, Skill):
            raise TypeError(f"expected a Skill, got {type(skill).__name__}")
        self._skills[skill.name] = skill

    def add_skills(self, skills: Iterable[Skill]) -> None:
        for skill in skills:
            self.add_skill(skill)

    def get_skill(self, name: str) -> Skill | None:
        return self._skills.get(name)

    def list_skills(self) -> list[Skill]:
        return list(self._skills.values())

    def describe_skills(self) -> str:
        """One `- name: description` line per skill, for a system prompt."""
        if not self._skills:
            return "No skills available"
        return "\n".join(f"- {s.name}: {s.description}" for s in self._skills.values())

    def build_skill_store(self) -> dict[str, dict[str, Any]]:
        """`{name: {"body_content": ..., "exports": {export name: value}}}` for every skill.

        Reading the exports imports each skill's `injection.py`.
        """
        return {
            name: {
                "body_content": skill.body_content,
                "exports": {item.name: item.value for item in skill.load_exports()},
            }
            for name, skill in self._skills.items()
        }

    def __len__(self) -> int:
        return len(self._skills)

    def __contains__(self, name: object) -> bool:
        return name in self._skills


__all__ = ["SkillRegistry"]
