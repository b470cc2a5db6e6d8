"""`SkillRegistry`: upstream's named store of skills, for code written against it.

Cave's agent takes `skills=[...]` and keeps them in its `SkillBridge`; a registry
can be handed over as `skills=registry.list_skills()`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, SupportsIndex

from cave_tui.skills.skill import Skill

_BODY, _EXPORTS = "body_content", "exports"  # 0.7's keys of a store entry


class SkillStoreEntry(str):
    """A skill in `build_skill_store()`: its body, a `str` as 0.8 gives it, which also
    answers 0.7's entry `{"body_content": body, "exports": {name: value}}` (by key, and
    equal to that dict). The exports are read (the skill's `injection.py` imported) only
    when asked for."""

    _load: Callable[[], dict[str, Any]]
    _exports: dict[str, Any] | None

    def __new__(cls, body: str, exports: Callable[[], dict[str, Any]]) -> SkillStoreEntry:
        entry = super().__new__(cls, body)
        entry._load, entry._exports = exports, None
        return entry

    @property
    def exports(self) -> dict[str, Any]:
        if self._exports is None:
            self._exports = self._load()
        return self._exports

    def __getitem__(self, key: SupportsIndex | slice | str) -> Any:
        if isinstance(key, str):
            if key == _BODY:
                return str(self)
            if key == _EXPORTS:
                return self.exports
            raise KeyError(key)
        return str(self)[key]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return set(other) == {_BODY, _EXPORTS} and (
                other[_BODY] == str(self) and other[_EXPORTS] == self.exports
            )
        return str.__eq__(self, other) is True

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = str.__hash__


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

    def build_skill_store(self) -> dict[str, SkillStoreEntry]:
        """`{name: body}` for every skill (0.8's store), each body also 0.7's entry
        `{"body_content": ..., "exports": {export name: value}}` (`SkillStoreEntry`).

        Reading an entry's exports imports that skill's `injection.py`.
        """
        return {
            name: SkillStoreEntry(skill.body_content, _exports_of(skill))
            for name, skill in self._skills.items()
        }

    def __len__(self) -> int:
        return len(self._skills)

    def __contains__(self, name: object) -> bool:
        return name in self._skills


def _exports_of(skill: Skill) -> Callable[[], dict[str, Any]]:
    return lambda: {item.name: item.value for item in skill.load_exports()}


__all__ = ["SkillRegistry", "SkillStoreEntry"]
