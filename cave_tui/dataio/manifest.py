"""The dump manifest (`manifest.json`): one schema, validated whole before anything is loaded.

`parse_manifest(path, fmt=, version=)` reads a manifest and checks it against the schema
(format and version; every variable, module and definition named by the rules `--inject`
uses; known formats, sizes, sha256s; file names that stay inside the folder; a definition's
source a string); `check_files` then checks each listed file (present, a regular file, not
a link out of the folder, the size the manifest says). Each reports every problem at once,
in one `ManifestError`, before the first value is read. Imported only when a dump is read
(pydantic takes a while to import).
"""

from __future__ import annotations

import enum
import json
import os
import re
import stat
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from cave_tui.dataio.bounded_read import MANIFEST_LIMIT, read_regular
from cave_tui.dataio.errors import DataIOError, NameConflictError
from cave_tui.dataio.formats import FORMATS
from cave_tui.dataio.module_trust import ModuleSource, module_source
from cave_tui.dataio.names import check_name
from cave_tui.runtime.provenance import UNMARKED, DefinitionOrigin, Provenance

SHA256 = re.compile(r"^[0-9a-f]{64}$")


class ManifestError(DataIOError):
    """The manifest or the files it lists are not valid; `problems` lists every one."""

    def __init__(self, where: Path, problems: list[str]) -> None:
        count = f"{len(problems)} problem" + ("" if len(problems) == 1 else "s")
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(
            f"{where} is not a valid cave dump ({count}; nothing was loaded):\n{lines}"
        )
        self.path = where
        self.problems = problems


def _bindable(name: str) -> str:
    """*name* if `--inject` would bind it (no builtins shadowed), else a readable error."""
    try:
        return check_name(name)
    except NameConflictError as exc:
        raise PydanticCustomError("name", "{reason}", {"reason": str(exc)}) from None
    except DataIOError as exc:  # InvalidNameError
        raise PydanticCustomError("name", "{reason}", {"reason": str(exc)}) from None


# A name `--inject` would bind: checked the same way wherever a manifest names a variable.
BindableName = Annotated[str, AfterValidator(_bindable)]


def _one_of(kind: type[enum.Enum], value: str | None) -> str | None:
    """*value* when it is one of *kind*'s values (or None), else a readable error."""
    if value is None or value in {m.value for m in kind}:
        return value
    known = ", ".join(str(m.value) for m in kind)
    raise PydanticCustomError(
        "value", "unknown value {value} (known: {known})", {"value": repr(value), "known": known}
    )


class _Entry(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)


class Restore(_Entry):
    """How a parquet file becomes the original object again."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, populate_by_name=True)

    as_: Literal["series", "arrow", "lazy"] = Field(alias="as")
    name: str | int | None = None  # a Series' name; "lazy": the engine scanning it again


class VariableEntry(_Entry):
    """One saved variable: its file in the dump folder, how big it is, its sha256."""

    name: BindableName
    format: str
    file: str
    bytes: int = Field(ge=0)
    sha256: str
    type: str = ""
    module: str = ""
    restore: Restore | None = None
    description: str | None = None
    version: int | None = Field(default=None, ge=1)

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str) -> str:
        if value not in FORMATS:
            raise PydanticCustomError(
                "format",
                "unknown format {value} (known: {known})",
                {"value": repr(value), "known": ", ".join(FORMATS)},
            )
        return value

    @field_validator("file")
    @classmethod
    def _plain_file_name(cls, value: str) -> str:
        """A bare file name: no folder part, so it cannot name a file outside the dump."""
        if (
            not value
            or value in (".", "..")
            or "\x00" in value
            or os.sep in value
            or "/" in value
            or (os.altsep is not None and os.altsep in value)
        ):
            raise PydanticCustomError(
                "file",
                "{value} is not a file name inside the dump folder "
                "(no folders, no absolute paths, no '..')",
                {"value": repr(value)},
            )
        return value

    @field_validator("sha256")
    @classmethod
    def _hex_digest(cls, value: str) -> str:
        if not SHA256.match(value):
            raise PydanticCustomError("sha256", "not a sha256 (64 lower-case hex digits)", {})
        return value

    @property
    def runs_code(self) -> bool:
        """Loading it runs code stored in it (pickle, dill)."""
        return FORMATS[self.format].runs_code


class ModuleEntry(_Entry):
    """An imported module, saved by name and imported again on load."""

    name: BindableName
    module: str

    @field_validator("module")
    @classmethod
    def _dotted_name(cls, value: str) -> str:
        parts = value.split(".")
        if not all(p.isidentifier() and p.isascii() for p in parts):
            template = "{value} is not a module name"
            raise PydanticCustomError("module", template, {"value": repr(value)})
        return value


class DefinitionEntry(_Entry):
    """A function or class the model wrote, kept as the source of the statement that
    defined it: run again inside the runtime, under its security checker (never unpickled)."""

    name: BindableName
    source: str
    type: str = ""
    digest: str | None = None  # of the source: tells the next snapshot whether it changed
    origin: str | None = None  # a `DefinitionOrigin`; None: a dump from before the mark

    @field_validator("origin")
    @classmethod
    def _known_origin(cls, value: str | None) -> str | None:
        return _one_of(DefinitionOrigin, value)

    @property
    def reported(self) -> bool:
        """Its source is only what the runtime reported, not a cell the host sent."""
        return self.origin == DefinitionOrigin.REPORTED.value


class SkippedEntry(_Entry):
    """What the dump could not save, and why (shown, never loaded)."""

    name: str
    reason: str = ""
    type: str = ""


class Manifest(BaseModel):
    """A whole `manifest.json` of format `cave-dump`."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    format: str
    version: int = Field(ge=1)
    variables: list[VariableEntry] = []
    modules: list[ModuleEntry] = []
    definitions: list[DefinitionEntry] = []  # since version 2
    skipped: list[SkippedEntry] = []
    given: list[BindableName] | None = None  # the saved names the user gave; the rest the model's
    provenance: str | None = None  # a `Provenance`: where the runtime that wrote it ran cells

    @field_validator("provenance")
    @classmethod
    def _known_provenance(cls, value: str | None) -> str | None:
        return _one_of(Provenance, value)

    @property
    def written_by(self) -> Provenance:
        """Where the dump's code ran; a dump from before the mark counts as a kernel's."""
        return UNMARKED if self.provenance is None else Provenance(self.provenance)

    def names(self) -> list[str]:
        return (
            [e.name for e in self.variables]
            + [m.name for m in self.modules]
            + [d.name for d in self.definitions]
        )

    def untrusted(
        self,
        folder: Path,
        trusted: Collection[str] = (),
        into: Provenance = Provenance.IN_PROCESS,
    ) -> list[str]:
        """Names whose loading into a runtime running as *into* would run code that came with
        the dump in *folder*, bar the *trusted* ones: pickled variables, definitions whose
        source the host never sent, modules that are not installed packages; and, when
        *into* is less confined than where the dump was written, every pickle and definition
        whatever vouches for it (a seal says who wrote the dump, not where its code may run)."""
        escapes = self.written_by.escapes_into(into)
        risky = [e.name for e in self.variables if e.runs_code]
        risky += [d.name for d in self.definitions if escapes or d.reported]
        risky += [m.name for m in self.modules if module_source(m.module, [folder]).needs_trust]
        if escapes:
            return risky
        return [n for n in risky if n not in trusted]


@dataclass(frozen=True)
class CheckedFile:
    """A manifest entry's file after the checks: where it is and what `stat` said."""

    entry: VariableEntry
    path: Path
    stat: os.stat_result


def _where(raw: Any, loc: tuple[int | str, ...]) -> str:
    """`variables[2] (len).name` from a pydantic error location."""
    text = ""
    node = raw
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
            node = node[part] if isinstance(node, list) and part < len(node) else None
            if isinstance(node, dict) and isinstance(node.get("name"), str):
                text += f" ({node['name']})"
        else:
            text += f".{part}" if text else str(part)
            node = node.get(part) if isinstance(node, dict) else None
    return text or "the manifest"


def _schema_problems(raw: Any, error: ValidationError) -> list[str]:
    problems = []
    for item in error.errors(include_url=False):
        message = "is missing" if item["type"] == "missing" else item["msg"]
        problems.append(f"{_where(raw, item['loc'])}: {message}")
    return problems


def _duplicates(raw: dict[str, Any]) -> list[str]:
    seen: dict[str, str] = {}
    problems = []
    for key in ("variables", "modules", "definitions"):
        entries = raw.get(key)
        if not isinstance(entries, list):
            continue
        for i, entry in enumerate(entries):
            name = entry.get("name") if isinstance(entry, dict) else None
            if not isinstance(name, str):
                continue
            here = f"{key}[{i}]"
            if name in seen:
                problems.append(f"{here} ({name}): the name is already used by {seen[name]}")
            else:
                seen[name] = here
    return problems


def validate_manifest(raw: Any, path: Path, *, fmt: str, version: int) -> Manifest:
    """The manifest *raw* (parsed JSON read from *path*) checked against the schema of
    format *fmt* up to *version*."""
    if not isinstance(raw, dict) or raw.get("format") != fmt:
        raise DataIOError(f"{path} is not a cave dump manifest", path=path)
    found = raw.get("version")
    if type(found) is int and found > version:
        raise DataIOError(
            f"{path} was written by a newer cave (dump v{found}; this cave reads v{version})",
            path=path,
        )
    problems: list[str] = []
    manifest = None
    try:
        manifest = Manifest.model_validate(raw)
    except ValidationError as exc:
        problems += _schema_problems(raw, exc)
    problems += _duplicates(raw)
    if problems or manifest is None:
        raise ManifestError(path, problems)
    return manifest


@dataclass(frozen=True)
class BadFile:
    """A manifest entry whose file failed a check, and why (`problem` names the file)."""

    entry: VariableEntry
    problem: str


def _file_problem(entry: VariableEntry, folder: Path, base: Path) -> CheckedFile | BadFile:
    path = folder / entry.file
    label = f"{entry.file} (variable {entry.name})"
    try:
        real = path.resolve(strict=True)
        info = os.stat(real)
    except FileNotFoundError:
        return BadFile(entry, f"{label} is missing")
    except (OSError, RuntimeError) as exc:  # a link loop, permission denied
        return BadFile(entry, f"{label} cannot be read ({exc})")
    if real.parent != base:
        return BadFile(entry, f"{label} is a link to {real}, outside the dump folder")
    if not stat.S_ISREG(info.st_mode):
        return BadFile(entry, f"{label} is not a regular file")
    if info.st_size != entry.bytes:
        return BadFile(
            entry,
            f"{label} has {info.st_size:,} bytes, the manifest says {entry.bytes:,} "
            "(truncated or changed)",
        )
    return CheckedFile(entry, real, info)


def check_each_file(manifest: Manifest, folder: Path) -> tuple[list[CheckedFile], list[BadFile]]:
    """Each listed file checked as `check_files` does: the good ones, and the bad with why."""
    base = folder.resolve()
    checked: list[CheckedFile] = []
    bad: list[BadFile] = []
    for entry in manifest.variables:
        outcome = _file_problem(entry, folder, base)
        if isinstance(outcome, CheckedFile):
            checked.append(outcome)
        else:
            bad.append(outcome)
    return checked, bad


def check_files(manifest: Manifest, folder: Path) -> list[CheckedFile]:
    """Every listed file: present, regular, inside *folder* (links too), of the listed size."""
    checked, bad = check_each_file(manifest, folder)
    if bad:
        raise ManifestError(folder, [b.problem for b in bad])
    return checked


def parse_manifest(path: Path, *, fmt: str, version: int) -> tuple[Manifest, bytes]:
    """The validated manifest in the file *path*, and the bytes it was read from."""
    try:
        text = read_regular(path, MANIFEST_LIMIT)
    except FileNotFoundError:
        raise DataIOError(
            f"{path.parent} is not a cave dump (no {path.name})", path=path.parent
        ) from None
    except OSError as exc:
        raise DataIOError(f"cannot read {path}: {exc.strerror or exc}", path=path) from None
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise DataIOError(f"{path} is corrupt (not JSON: {exc})", path=path) from None
    return validate_manifest(raw, path, fmt=fmt, version=version), text


__all__ = [
    "BadFile",
    "CheckedFile",
    "DefinitionEntry",
    "Manifest",
    "ManifestError",
    "ModuleEntry",
    "ModuleSource",
    "SkippedEntry",
    "VariableEntry",
    "check_each_file",
    "check_files",
    "parse_manifest",
    "validate_manifest",
]
