"""Variable names for loaded data: derived from file names, validated before binding."""

from __future__ import annotations

import builtins
import keyword
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from cave_tui.dataio.errors import DataIOError, InvalidNameError, NameConflictError
from cave_tui.dataio.formats import stem_of

BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_"))
# Names the agent binds in the namespace itself (its tools): data bound there would be
# replaced by the tool, or break it. The same names as `cave_tui.agent.final_answer.FINAL_NAME`
# and `cave_tui.skills.runtime_bridge.ACTIVATE_NAME` (a test keeps them in step).
RESERVED_NAMES: dict[str, str] = {
    "final_answer": "the agent's tool that ends its turn",
    "activate_skill": "the agent's tool that loads a skill",
}


def identifier_from(text: str, fallback: str = "data") -> str:
    """*text* made into a public identifier: `2024 Sales-v2` -> `data_2024_sales_v2`."""
    text = unicodedata.normalize("NFKC", text).strip()
    chars = [c if (c.isidentifier() or (c.isdigit() and c.isascii())) else "_" for c in text]
    name = re.sub(r"_+", "_", "".join(chars)).strip("_")
    if not name:
        return fallback
    if not name.isidentifier():  # starts with a digit
        name = f"{fallback}_{name}"
    if not name.isidentifier():
        return fallback
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        name += "_"
    return name


def name_from_path(path: str | Path) -> str:
    """The default variable name for a file: its stem made into an identifier."""
    return identifier_from(stem_of(Path(path)))


def check_name(name: object, existing: Iterable[str] = (), *, allow_shadow: bool = False) -> str:
    """Return *name* if it is a str that can be bound; `InvalidNameError` or `NameConflictError`
    otherwise.

    A conflict (shadowing a builtin or replacing an existing variable) is a separate
    error so the caller can ask the user and retry with `allow_shadow=True`; a name the
    agent reserves for its tools is invalid whatever *allow_shadow* says.
    """
    if not isinstance(name, str) or not name.isidentifier():
        suggestion = identifier_from(str(name))
        raise InvalidNameError(
            f"{name!r} is not a valid Python name (letters, digits and _, not starting "
            f"with a digit); try {suggestion!r}"
        )
    if keyword.iskeyword(name):
        raise InvalidNameError(f"{name!r} is a Python keyword; try {name + '_'!r}")
    if name.startswith("_"):
        raise InvalidNameError(
            f"{name!r} starts with an underscore: such names are hidden from the agent; "
            f"try {name.lstrip('_') or 'data'!r}"
        )
    if name in RESERVED_NAMES:
        raise InvalidNameError(
            f"{name!r} is reserved: it is {RESERVED_NAMES[name]}, which would replace what "
            f"is bound there; try {name + '_data'!r}"
        )
    if allow_shadow:
        return name
    if name in set(existing):
        raise NameConflictError(
            f"{name!r} already exists in the namespace and would be replaced",
            name=name,
            kind="variable",
        )
    if name in BUILTIN_NAMES:
        raise NameConflictError(
            f"{name!r} would shadow the Python builtin {name}()", name=name, kind="builtin"
        )
    return name


def unloadable_name(name: str) -> str | None:
    """Why a dump could not bind *name* again (the rules of `check_name`), or None."""
    try:
        check_name(name)
    except DataIOError as exc:
        if name in BUILTIN_NAMES:
            return f"named like the Python builtin {name}(), which a dump never restores"
        return str(exc)
    return None
