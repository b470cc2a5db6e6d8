"""The settings' command-line options, made from the table (`cave_tui.app.config.TABLE`).

`@setting_options(Command.RUN)` gives a typer command a flag for every setting that
command takes (with the declared flags, help and metavar) in place of its `settings`
parameter, and hands it the ones given as `settings` (setting name -> value). A setting's
old name (`--policy` for `--guard`) stays a hidden flag for one release: it still works
and prints a one-line deprecation notice. `argparse_options` makes the same flags for the
fast path of `cave` (main.py).
"""

from __future__ import annotations

import argparse
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any

import typer

from cave_tui.app.config import TABLE
from cave_tui.app.settings import Command, Declared, SettingValue

# A setting's Python type (as declared in `Config`) -> its flag's type (None: not given).
FLAG_TYPES: dict[str, Any] = {
    "str": str | None,
    "str | None": str | None,
    "bool": bool | None,
    "int": int | None,
    "float": float | None,
    "list[str]": list[str] | None,
}
ARGPARSE_TYPES: dict[str, type] = {"int": int, "float": float}


def deprecation_notice(old: str, new: str) -> str:
    """The one line said when a deprecated flag is used."""
    return f"cave: {old} is deprecated and goes in the next release; use {new} (same values)"


def _flags(d: Declared) -> list[tuple[str, tuple[str, ...], bool]]:
    """(parameter name, click declarations, hidden) of setting *d*: its own, then its old."""
    out = [(d.name, d.setting.flags, False)]
    out += [
        (old, (flag,), True) for old, flag in zip(d.setting.old_names, d.old_flags, strict=True)
    ]
    return out


def _parameters(command: Command) -> Iterator[tuple[str, Any, Declared]]:
    """(parameter name, annotation, setting) of every flag *command* takes, in table order."""
    for d in TABLE:
        if not d.takes(command):
            continue
        for name, flags, hidden in _flags(d):
            kind = FLAG_TYPES[d.type]
            help_ = d.setting.help if not hidden else f"Deprecated: use {d.setting.flags[0]}."
            option = typer.Option(*flags, help=help_, metavar=d.setting.metavar, hidden=hidden)
            yield name, Annotated[kind, option], d


def setting_options(command: Command) -> Callable[[Callable[..., object]], Callable[..., object]]:
    """Put *command*'s setting flags in place of the typer command's `settings` parameter;
    it receives the settings given as `settings: dict[str, SettingValue]`."""

    def decorate(fn: Callable[..., object]) -> Callable[..., object]:
        extra = list(_parameters(command))
        base = inspect.signature(fn, eval_str=True)
        params: list[inspect.Parameter] = []
        for p in base.parameters.values():
            if p.name != "settings":
                params.append(p)
                continue
            params += [
                inspect.Parameter(name, p.kind, default=None, annotation=a) for name, a, _ in extra
            ]

        @functools.wraps(fn)
        def wrapper(*args: object, **kwargs: object) -> object:
            values = {name: kwargs.pop(name, None) for name, _, _ in extra}
            return fn(*args, settings=given_settings(values), **kwargs)

        # inspect (and so typer) reads __signature__; typeshed does not declare it.
        wrapper.__signature__ = base.replace(parameters=params)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {
            **{k: v for k, v in fn.__annotations__.items() if k != "settings"},
            **{name: a for name, a, _ in extra},
        }
        return wrapper

    return decorate


def given_settings(values: Mapping[str, object]) -> dict[str, SettingValue]:
    """The flags' values by parameter name -> the settings given, by setting name, each
    checked (`typer.BadParameter` names the flag as typed). A value given under an old
    name is its setting's (unless the new flag is given too), with a deprecation notice."""
    out: dict[str, SettingValue] = {}
    for d in TABLE:
        for name, flags, hidden in _flags(d):
            value = values.get(name)
            if value is None:
                continue
            try:
                checked = d.setting.check(name, value)
            except ValueError as exc:
                hint = flags[0].partition("/")[0].strip() or flags[0].partition("/")[2]
                raise typer.BadParameter(str(exc), param_hint=hint) from None
            if hidden:
                typer.echo(deprecation_notice(flags[0], d.setting.flags[0]), err=True)
                out.setdefault(d.name, checked)
            else:
                out[d.name] = checked
    return out


def argparse_options(parser: argparse.ArgumentParser, command: Command) -> None:
    """Add *command*'s setting flags to *parser* (dest: the parameter name; not given: None)."""
    for d in TABLE:
        if not d.takes(command):
            continue
        for name, flags, _ in _flags(d):
            if d.type == "bool":  # click's "--on/--off" declarations, either side may be empty
                sides = [flag.partition("/") for flag in flags]
                positive = [on.strip() for on, _, _ in sides if on.strip()]
                negative = [off.strip() for _, _, off in sides if off.strip()]
                parser.add_argument(*positive, dest=name, action="store_true", default=None)
                if negative:
                    parser.add_argument(*negative, dest=name, action="store_false")
            elif d.type == "list[str]":
                parser.add_argument(*flags, dest=name, action="append", default=None)
            else:
                kind = ARGPARSE_TYPES.get(d.type, str)
                parser.add_argument(*flags, dest=name, type=kind, default=None)


def flag_names(command: Command) -> dict[str, set[str]]:
    """Every flag *command* takes for the settings, by parameter name (tests, docs)."""
    return {
        name: {f.strip() for flag in flags for f in flag.split("/")} - {""}
        for d in TABLE
        if d.takes(command)
        for name, flags, _ in _flags(d)
    }
