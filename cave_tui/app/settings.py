"""What a setting is: its declaration (`Setting`), the checks, and the table's look-ups.

Every setting is one field of `cave_tui.app.config.Config`, declared with `setting(...)`:
its type and default are the field's, the rest (help, check, command-line flags, the
commands that take it, the config file's table, old names) is the `Setting` kept in the
field's metadata. The command line (`frontends/cli/setting_options.py`), the config file
(`config.load_config`/`save_setting`) and `/set` are all made from that one table.
Imports only the standard library, so `cave --help` stays fast.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import Field, dataclass, field
from typing import TypeVar

T = TypeVar("T")

SettingValue = str | bool | int | float | list[str] | None
"""A setting's value as `Config` holds it (and as a flag, the file or `/set` gives it)."""

Check = Callable[[str, object], T]
"""`check(name, value)`: *value* converted for the setting written *name*; ValueError says why."""

METADATA_KEY = "cave.setting"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class Command(enum.Enum):
    """The `cave` commands a setting can be a flag of."""

    APP = "cave"  # the app and `cave --plain`
    RUN = "cave run"
    DEMO = "cave demo"
    REPLAY = "cave replay"
    SANDBOX = "cave sandbox"
    MCP = "cave mcp"  # the MCP server: the settings of `cave run`
    ACP = "cave acp"  # the ACP agent: the settings of `cave run`


@dataclass(frozen=True)
class Setting:
    """One setting's declaration, apart from its name, type and default (the field's)."""

    help: str
    check: Check[SettingValue]
    flags: tuple[str, ...] = ()  # click declarations: "--name", "-n", "--on/--off"
    commands: frozenset[Command] = frozenset()  # the commands that take the flags
    metavar: str | None = None  # one value of a repeatable flag, for --help
    table: str | None = None  # the config file's [table] that may also hold it
    table_key: str | None = None  # its key in that table (default: the setting's name)
    old_names: tuple[str, ...] = ()  # deprecated: still read as file key, CAVE_ env, flag
    live: bool = False  # `/set` changes it in the running session (else: saved for next start)


@dataclass(frozen=True)
class Declared:
    """A setting of the table: its name, Python type (as written), default and declaration."""

    name: str
    type: str
    default: SettingValue
    setting: Setting

    @property
    def env(self) -> tuple[str, ...]:
        """The `CAVE_*` variables that set it, the current name first."""
        return tuple(f"CAVE_{n.upper()}" for n in (self.name, *self.setting.old_names))

    @property
    def file_keys(self) -> tuple[str, ...]:
        """The config file's top-level keys for it, the current name first."""
        return (self.name, *self.setting.old_names)

    @property
    def old_flags(self) -> tuple[str, ...]:
        """Deprecated flags kept for one release (`--policy` for `--guard`)."""
        return tuple("--" + n.replace("_", "-") for n in self.setting.old_names)

    def takes(self, command: Command) -> bool:
        return command in self.setting.commands


def setting(
    default: T,
    check: Check[T],
    help: str,
    *,
    flags: tuple[str, ...] = (),
    commands: tuple[Command, ...] = (),
    metavar: str | None = None,
    table: str | None = None,
    table_key: str | None = None,
    old_names: tuple[str, ...] = (),
    live: bool = False,
) -> T:
    """A `Config` field declaring one setting (see `Setting`); a list default is copied."""
    declared = Setting(
        help=help,
        check=check,  # type: ignore[arg-type]  # T is one of SettingValue's members
        flags=flags,
        commands=frozenset(commands),
        metavar=metavar,
        table=table,
        table_key=table_key,
        old_names=old_names,
        live=live,
    )
    metadata = {METADATA_KEY: declared}
    if isinstance(default, list):
        items = list(default)
        return field(default_factory=lambda: list(items), metadata=metadata)  # type: ignore[return-value]
    return field(default=default, metadata=metadata)


def declared_in(fields: tuple[Field[object], ...]) -> Iterator[Declared]:
    """The settings among a dataclass's *fields*, in order."""
    for f in fields:
        declared = f.metadata.get(METADATA_KEY)
        if isinstance(declared, Setting):
            default = f.default_factory() if callable(f.default_factory) else f.default
            yield Declared(f.name, str(f.type), default, declared)  # type: ignore[arg-type]


def aliases(table: tuple[Declared, ...]) -> Mapping[str, str]:
    """Every name a setting is known by (its own and its old ones) -> its name."""
    names = {d.name: d.name for d in table}
    names.update({old: d.name for d in table for old in d.setting.old_names})
    return names


# -- checks ----------------------------------------------------------------------------------
def optional_text(name: str, value: object) -> str | None:
    """A string, stripped; empty or None: not set."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    return value.strip() or None


def boolean(name: str, value: object) -> bool:
    """true/false, yes/no, on/off, 1/0."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{name} must be true or false")


def whole_number_from(low: int) -> Check[int]:
    """A whole number, *low* or more."""

    def check(name: str, value: object) -> int:
        try:
            number = int(value)  # type: ignore[call-overload]
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a whole number, not {value!r}") from None
        if isinstance(value, bool) or number < low:
            raise ValueError(f"{name} must be at least {low}, not {value!r}")
        return number

    return check


def seconds(name: str, value: object) -> float:
    """A number of seconds, 0 or more (0 means no limit)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number of seconds, not {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(number) or number < 0:
        raise ValueError(f"{name} must be 0 (no limit) or a positive number of seconds")
    return number


def one_of(*choices: str, lower: bool = True) -> Check[str]:
    """One of *choices* (compared in lower case unless *lower* is False)."""

    def check(name: str, value: object) -> str:
        text = str(value).strip()
        text = text.lower() if lower else text
        if text not in choices:
            raise ValueError(
                f"unknown {name} {value!r}: {name} must be one of {', '.join(choices)}"
            )
        return text

    return check


def non_empty_text(name: str, value: object) -> str:
    """A string that is not empty."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string")
    text = value.strip()
    if not text:
        raise ValueError(f"{name} must not be empty")
    return text
