"""Finding skills on disk: one SKILL.md, one folder of skills, or the usual places.

`SkillDiscovery.from_file` / `from_directory` raise on the first bad skill (for
library users who want to know). `discover_skills` is for front ends: it keeps
every valid skill, reports each bad one with its file, and never stops the app.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cave_tui.skills.errors import SkillError, SkillFolderNameWarning, SkillValidationError
from cave_tui.skills.skill import (
    SKILL_FILENAME,
    Skill,
    folder_named_like,
    split_frontmatter,
    validate_fields,
)

APP_NAME = "cave"


def user_skills_dir() -> Path:
    """`<user config dir>/skills` (e.g. ~/.config/cave/skills on Linux)."""
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME)) / "skills"


def bundled_skills_dir() -> Path | None:
    """The skills shipped with cave: `cave_tui/skills/bundled/`, a link to the repository's
    top-level `skills/` folder in a checkout, the folder itself in an installed wheel."""
    folder = (Path(__file__).resolve().parent / "bundled").resolve()
    return folder if folder.is_dir() else None


def default_skill_dirs(
    extra: Iterable[Path | str] = (),
    *,
    cwd: Path | None = None,
    include_user: bool = True,
    include_bundled: bool = True,
) -> list[Path]:
    """Where to look, highest precedence first: `--skills` dirs, ./skills, user, bundled."""
    dirs = [Path(p).expanduser() for p in extra]
    dirs.append((cwd or Path.cwd()) / "skills")
    if include_user:
        dirs.append(user_skills_dir())
    bundled = bundled_skills_dir() if include_bundled else None
    if bundled is not None:
        dirs.append(bundled)
    unique: list[Path] = []
    seen: set[Path] = set()
    for d in dirs:
        key = d.resolve() if d.exists() else d
        if key not in seen:
            seen.add(key)
            unique.append(d)
    return unique


class SkillDiscovery:
    """Parse SKILL.md files into `Skill` objects (metadata only; bodies load on activation)."""

    Error = SkillError  # upstream spelling: `except SkillDiscovery.Error`

    @classmethod
    def from_file(cls, path: Path | str) -> Skill:
        """Load one skill from its SKILL.md (or from the folder holding it)."""
        path = Path(path).expanduser()
        if path.is_dir():
            path = path / SKILL_FILENAME
        if not path.is_file():
            raise SkillValidationError(path, ["Skill file not found"])
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SkillValidationError(path, [f"cannot be read: {exc}"]) from None
        parts = split_frontmatter(text)
        if parts is None:
            raise SkillValidationError(
                path,
                [
                    "No YAML frontmatter found: it must start with YAML frontmatter "
                    "between two '---' lines"
                ],
            )
        fields = _parse_yaml(path, parts[0])
        errors = validate_fields(fields, path.parent)
        if errors:
            raise SkillValidationError(path, errors)
        if not folder_named_like(path.parent, fields["name"]):
            warnings.warn(SkillFolderNameWarning(path, fields["name"]), stacklevel=2)
        return Skill(
            name=fields["name"],
            description=fields["description"],
            path=path,
            license=fields.get("license"),
            compatibility=fields.get("compatibility"),
            metadata=fields.get("metadata"),
            allowed_tools=fields.get("allowed-tools"),
        )

    @classmethod
    def from_directory(cls, directory: Path | str) -> list[Skill]:
        """Every skill in *directory*: its own SKILL.md and its subfolders' (sorted by name).

        Raises `SkillValidationError` listing every bad skill file, or a
        `SkillError` if the folder is missing or two skills share a name.
        """
        found = scan_directory(Path(directory).expanduser())
        if found.errors:
            if len(found.errors) == 1:
                raise found.errors[0]
            raise SkillError(
                f"{len(found.errors)} invalid skills in {directory}:\n"
                + "\n".join(f"  - {e}" for e in found.errors)
            )
        return found.skills


@dataclass
class DiscoveryResult:
    """Valid skills, plus one error per bad skill (each naming its file)."""

    skills: list[Skill] = field(default_factory=list)
    errors: list[SkillError] = field(default_factory=list)
    shadowed: list[Path] = field(default_factory=list)  # same name found in a later dir

    def __iter__(self) -> Iterator[Skill]:
        return iter(self.skills)


def scan_directory(directory: Path) -> DiscoveryResult:
    result = DiscoveryResult()
    if not directory.is_dir():
        result.errors.append(SkillError(f"{directory}: Skills directory not found"))
        return result
    candidates = []
    if (directory / SKILL_FILENAME).is_file():
        candidates.append(directory / SKILL_FILENAME)
    candidates += sorted(
        p / SKILL_FILENAME
        for p in directory.iterdir()
        if p.is_dir() and not p.name.startswith(".") and (p / SKILL_FILENAME).is_file()
    )
    by_name: dict[str, Path] = {}
    for path in candidates:
        try:
            skill = SkillDiscovery.from_file(path)
        except SkillError as exc:
            result.errors.append(exc)
            continue
        if skill.name in by_name:
            result.errors.append(
                SkillError(
                    f"{path}: skill name {skill.name!r} is also used by {by_name[skill.name]}"
                )
            )
            continue
        by_name[skill.name] = path
        result.skills.append(skill)
    return result


def discover_skills(
    extra_dirs: Iterable[Path | str] = (),
    *,
    cwd: Path | None = None,
    include_user: bool = True,
    include_bundled: bool = True,
) -> DiscoveryResult:
    """Skills from `--skills` dirs, ./skills, the user config dir and the bundled folder.

    A name found in several places is taken from the first (so a project can
    override a user or bundled skill). Missing default folders are not errors;
    a missing `--skills` folder is.
    """
    extra = [Path(p).expanduser() for p in extra_dirs]
    result = DiscoveryResult()
    taken: set[str] = set()
    for folder in default_skill_dirs(
        extra, cwd=cwd, include_user=include_user, include_bundled=include_bundled
    ):
        if not folder.is_dir():
            if folder in extra:
                result.errors.append(SkillError(f"{folder}: Skills directory not found"))
            continue
        found = scan_directory(folder)
        result.errors.extend(found.errors)
        for skill in found.skills:
            if skill.name in taken:
                assert skill.path is not None
                result.shadowed.append(skill.path)
                continue
            taken.add(skill.name)
            result.skills.append(skill)
    return result


def _parse_yaml(path: Path, text: str) -> dict:
    """Frontmatter with strictyaml (what the standard's reference library uses)."""
    import strictyaml

    if not text.strip():
        raise SkillValidationError(path, ["frontmatter is empty (name and description needed)"])
    try:
        data = strictyaml.load(text).data
    except strictyaml.YAMLError as exc:
        problem = " ".join(str(exc).split())
        raise SkillValidationError(path, [f"Invalid YAML in frontmatter: {problem}"]) from None
    if not isinstance(data, dict):
        raise SkillValidationError(path, ["frontmatter must be a YAML mapping"])
    return data
