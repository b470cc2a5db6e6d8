"""Errors raised while discovering, validating and activating skills.

Every error that concerns a file names it, so a user with twenty skill folders
knows which one to fix.
"""

from __future__ import annotations

from pathlib import Path


class SkillError(Exception):
    """Base class for every skill problem."""


class SkillValidationError(SkillError, ValueError):
    """A SKILL.md (or a `Skill(...)` built in code) breaks the Agent Skills standard."""

    def __init__(self, path: Path | str | None, errors: list[str]) -> None:
        self.path = Path(path) if path is not None else None
        self.errors = list(errors)
        where = str(self.path) if self.path is not None else "skill defined in code"
        if len(self.errors) == 1:
            message = f"{where}: {self.errors[0]}"
        else:
            message = f"{where}: {len(self.errors)} problems:\n" + "\n".join(
                f"  - {e}" for e in self.errors
            )
        super().__init__(message)


class SkillFolderNameWarning(UserWarning):
    """A skill's folder is not named like the skill. The Agent Skills standard asks for it;
    upstream CaveAgent loads such a skill regardless, so cave loads it and warns."""

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.name = name
        super().__init__(
            f"{path}: folder {path.parent.name!r} is not named like its skill {name!r} "
            "(the Agent Skills standard asks for it); loaded as "
            f"{name!r}"
        )


class SkillNotFoundError(SkillError, LookupError):
    """`activate_skill(name)` was given a name no loaded skill has."""

    def __init__(self, name: str, available: list[str]) -> None:
        self.name = name
        self.available = list(available)
        shown = ", ".join(self.available) if self.available else "(none)"
        super().__init__(f"no skill named {name!r}; available skills: {shown}")

    def __str__(self) -> str:  # LookupError/KeyError would quote the message
        return self.args[0]


class SkillInjectionError(SkillError):
    """A skill's `injection.py` failed to import or its `__exports__` is wrong."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = Path(path)
        super().__init__(f"{self.path}: {problem}")
