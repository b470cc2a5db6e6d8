"""`Skill`: one Agent Skill (agentskills.io), loaded progressively.

Discovery reads only the frontmatter's metadata. The body is read, and the
optional `injection.py` (a cave extension: `__exports__` of `Function`,
`Variable` and `Type`) is imported, only when the skill is activated; upstream
imported `injection.py` at discovery, so a broken or slow helper module cost
every session whether or not the skill was used.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import threading
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from cave_tui.runtime.items import Function, Injectable, Type, Variable
from cave_tui.skills.errors import SkillInjectionError, SkillValidationError

SKILL_FILENAME = "SKILL.md"
INJECTION_FILENAME = "injection.py"
SCRIPTS_DIR = "scripts"
REFERENCES_DIR = "references"
ASSETS_DIR = "assets"

_FENCE = re.compile(r"^---[ \t]*$", re.MULTILINE)
# The reference validator's "Missing required field in frontmatter: name", worded as
# upstream CaveAgent (0.7 and 0.8) words it, which callers match: "... field 'name' ...".
_MISSING = re.compile(r"^Missing required field in frontmatter: ([\w-]+)$")


def split_frontmatter(text: str) -> tuple[str, str] | None:
    """`(frontmatter, body)` of a SKILL.md, or None when it has no `---` block on top.

    The closing fence must be a line of its own, so `---` inside a value is fine.
    """
    text = text.lstrip("\ufeff")
    first = _FENCE.match(text)
    if first is None:
        return None
    closing = _FENCE.search(text, first.end())
    if closing is None:
        return None
    return text[first.end() : closing.start()], text[closing.end() :].strip("\n")


def folder_named_like(skill_dir: Path, name: object) -> bool:
    """Whether *skill_dir* is named *name* (as the standard compares them, NFKC)."""
    return unicodedata.normalize("NFKC", skill_dir.name) == name


def validate_fields(fields: Mapping[str, Any], skill_dir: Path | None) -> list[str]:
    """The standard's rules (via its reference library, `skills-ref`), plus type checks.
    A folder not named like the skill is no error here (`SkillFolderNameWarning`)."""
    from skills_ref.validator import validate_metadata

    named = skill_dir is None or folder_named_like(skill_dir, fields.get("name"))
    errors = [
        _MISSING.sub(r"Missing required field '\1' in frontmatter", e)
        for e in validate_metadata(dict(fields), skill_dir if named else None)
    ]
    license_ = fields.get("license")
    if license_ is not None and not isinstance(license_, str):
        errors.append("Field 'license' must be a string")
    metadata = fields.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        errors.append("Field 'metadata' must be a mapping of strings to strings")
    tools = fields.get("allowed-tools")
    if tools is not None and not isinstance(tools, str):
        errors.append("Field 'allowed-tools' must be a space-delimited string")
    return errors


class Skill:
    """A named package of instructions (and, optionally, helpers to inject)."""

    def __init__(
        self,
        name: str,
        description: str,
        body_content: str | None = None,
        functions: Iterable[Function] | None = None,
        variables: Iterable[Variable] | None = None,
        types: Iterable[Type] | None = None,
        *,
        path: Path | str | None = None,
        license: str | None = None,
        compatibility: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        allowed_tools: str | Iterable[str] | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        fields: dict[str, Any] = {"name": name, "description": description}
        if license is not None:
            fields["license"] = license
        if compatibility is not None:
            fields["compatibility"] = compatibility
        if metadata is not None:
            fields["metadata"] = metadata
        if allowed_tools is not None:
            fields["allowed-tools"] = (
                allowed_tools if isinstance(allowed_tools, str) else " ".join(allowed_tools)
            )
        errors = validate_fields(fields, self.directory)
        if errors:
            raise SkillValidationError(self.path, errors)
        self.name: str = name.strip()
        self.description: str = " ".join(description.split())
        self.license = license
        self.compatibility = compatibility
        self.metadata: dict[str, str] = {str(k): str(v) for k, v in (metadata or {}).items()}
        self.allowed_tools: list[str] = str(fields.get("allowed-tools", "")).split()
        self._body = body_content
        self._own_exports: list[Injectable] = [
            *(functions or []),
            *(types or []),
            *(variables or []),
        ]
        for item in self._own_exports:
            if not isinstance(item, Function | Variable | Type):
                raise TypeError(
                    f"skill {name!r}: functions/variables/types take Function, Variable or "
                    f"Type objects, not {type(item).__name__}"
                )
        self._exports: list[Injectable] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path else ""
        return f"Skill(name={self.name!r}{where})"

    # -- files -------------------------------------------------------------------
    @property
    def directory(self) -> Path | None:
        return self.path.parent if self.path is not None else None

    def _sub(self, name: str) -> Path | None:
        return self.directory / name if self.directory is not None else None

    @property
    def injection_path(self) -> Path | None:
        return self._sub(INJECTION_FILENAME)

    @property
    def has_injection(self) -> bool:
        path = self.injection_path
        return path is not None and path.is_file()

    @property
    def scripts_dir(self) -> Path | None:
        return self._sub(SCRIPTS_DIR)

    @property
    def references_dir(self) -> Path | None:
        return self._sub(REFERENCES_DIR)

    @property
    def assets_dir(self) -> Path | None:
        return self._sub(ASSETS_DIR)

    def resources(self) -> dict[str, list[str]]:
        """Files under scripts/, references/ and assets/, relative to the skill folder."""
        out: dict[str, list[str]] = {}
        directory = self.directory
        if directory is None:
            return out
        for label in (SCRIPTS_DIR, REFERENCES_DIR, ASSETS_DIR):
            folder = directory / label
            if folder.is_dir():
                out[label] = sorted(
                    str(p.relative_to(directory)) for p in folder.rglob("*") if p.is_file()
                )
        return out

    def read_reference(self, name: str) -> str:
        """Text of `references/<name>` (the standard's third disclosure level)."""
        return self._resource(REFERENCES_DIR, name).read_text(encoding="utf-8")

    def read_asset(self, name: str) -> bytes:
        return self._resource(ASSETS_DIR, name).read_bytes()

    def _resource(self, folder: str, name: str) -> Path:
        base = self._sub(folder)
        if base is None or not base.is_dir():
            raise FileNotFoundError(f"skill {self.name!r} has no {folder}/ folder")
        target = (base / name).resolve()
        if not target.is_relative_to(base.resolve()) or not target.is_file():
            raise FileNotFoundError(f"{base / name} does not exist")
        return target

    # -- progressive disclosure ------------------------------------------------------
    @property
    def body_content(self) -> str:
        """The instructions (SKILL.md without its frontmatter), read when first needed."""
        if self._body is not None:
            return self._body
        if self.path is None:
            return ""
        text = self.path.read_text(encoding="utf-8")
        parts = split_frontmatter(text)
        return parts[1] if parts is not None else text.strip()

    # -- upstream's view of the exports (reading one imports `injection.py`) -------------
    @property
    def functions(self) -> list[Function]:
        """Functions to inject on activation (given in code, then `injection.py`'s)."""
        return [item for item in self.load_exports() if isinstance(item, Function)]

    @property
    def variables(self) -> list[Variable]:
        return [item for item in self.load_exports() if isinstance(item, Variable)]

    @property
    def types(self) -> list[Type]:
        return [item for item in self.load_exports() if isinstance(item, Type)]

    @property
    def exports_loaded(self) -> bool:
        """True once `load_exports()` ran (i.e. `injection.py` was imported)."""
        return self._exports is not None

    def known_exports(self) -> list[Injectable]:
        """The exports known without importing anything: all of them once `injection.py`
        was imported (or when there is none), else only those given in code."""
        with self._lock:
            if self._exports is not None:
                return list(self._exports)
        if not self.has_injection:
            return self.load_exports()
        return list(self._own_exports)

    def load_exports(self) -> list[Injectable]:
        """Items to inject on activation: those given in code, then `injection.py`'s."""
        with self._lock:
            if self._exports is None:
                items = list(self._own_exports)
                if self.has_injection:
                    assert self.injection_path is not None
                    items.extend(import_exports(self.injection_path, self.name))
                self._exports = items
            return list(self._exports)


def import_exports(path: Path, skill_name: str) -> list[Injectable]:
    """Import *path* as a fresh module and return its validated `__exports__`."""
    module_name = "cave_skill_" + re.sub(r"\W", "_", skill_name)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise SkillInjectionError(path, "cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    # Registered only while it runs (dataclasses look their module up). Left out of
    # sys.modules afterwards so dill pickles the exports by value for a kernel runtime.
    previous = sys.modules.get(module_name)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise SkillInjectionError(path, f"failed to import: {type(exc).__name__}: {exc}") from exc
    finally:
        if previous is not None:
            sys.modules[module_name] = previous
        else:
            sys.modules.pop(module_name, None)
    exports = getattr(module, "__exports__", None)
    if exports is None:
        raise SkillInjectionError(
            path, "defines no __exports__ (a list of Function, Variable and Type objects)"
        )
    if not isinstance(exports, list | tuple):
        raise SkillInjectionError(path, f"__exports__ must be a list, not {type(exports).__name__}")
    for i, item in enumerate(exports):
        if not isinstance(item, Function | Variable | Type):
            raise SkillInjectionError(
                path,
                f"__exports__[{i}] is a {type(item).__name__}; wrap it in Function(...), "
                "Variable(name, value, description) or Type(...)",
            )
    return list(exports)
