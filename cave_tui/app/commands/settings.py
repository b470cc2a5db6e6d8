"""`/set`: every setting of the table (`config.TABLE`), shown, checked and changed by name.

A setting declared `live` changes in the running session (`APPLY` says how); any other is
read at start, so `/set` saves it in config.toml for the next one. The names, the checks
and the help are the table's: a new setting is in `/set` without a line here.
"""

from __future__ import annotations

from collections.abc import Callable

from cave_tui.app.commands.registry import CommandContext, CommandError, registry
from cave_tui.app.config import TABLE, declared, save_setting
from cave_tui.app.settings import SettingValue


def _model(ctx: CommandContext, value: SettingValue) -> None:
    ctx.services.set_model(str(value))


def _guard(ctx: CommandContext, value: SettingValue) -> None:
    ctx.services.set_policy(str(value))


def _theme(ctx: CommandContext, value: SettingValue) -> None:
    if str(value) not in (ctx.ui.theme_names() or []):
        raise CommandError(f"unknown theme {value!r}: type /theme for the list")
    ctx.ui.set_theme(str(value))


def _approve(ctx: CommandContext, value: SettingValue) -> None:
    ctx.services.config.approve = str(value)


def _max_steps(ctx: CommandContext, value: SettingValue) -> None:
    if not isinstance(value, int):
        raise CommandError("max_steps must be a whole number")
    ctx.services.config.max_steps = value
    if ctx.agent is not None:
        ctx.agent.max_steps = value


def _policies(ctx: CommandContext, value: SettingValue) -> None:
    ctx.services.set_policies(str(value))


def _lazy_above(ctx: CommandContext, value: SettingValue) -> None:
    ctx.services.config.lazy_above = str(value)  # read by each /inject


APPLY: dict[str, Callable[[CommandContext, SettingValue], None]] = {
    "model": _model,
    "guard": _guard,
    "theme": _theme,
    "approve": _approve,
    "max_steps": _max_steps,
    "policies": _policies,
    "lazy_above": _lazy_above,
}
"""How each `live` setting changes in the running session."""


@registry.command(
    "set", "Show the settings, or change one (checked as in config.toml)", "[NAME [VALUE]]",
    max_args=2,
)  # fmt: skip
async def set_(ctx: CommandContext, args: list[str]) -> None:
    config = ctx.services.config
    if not args:
        lines = ["| setting | value | from | what |", "|---|---|---|---|"]
        lines += [
            f"| {d.name} | {getattr(config, d.name)} | {config.source(d.name)} | {d.setting.help} |"
            for d in TABLE
        ]
        ctx.print("\n".join([*lines, "", "Change one with `/set NAME VALUE`."]))
        return
    try:
        found = declared(args[0].lower())
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if len(args) == 1:
        when = "changes now" if found.setting.live else "read at start"
        value = getattr(config, found.name)
        ctx.print(f"`{found.name}` = `{value}` ({config.source(found.name)}; {when})\n\n"
                  f"{found.setting.help}")  # fmt: skip
        return
    try:
        value = found.setting.check(found.name, args[1])
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if found.setting.live:
        try:
            APPLY[found.name](ctx, value)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        config.sources[found.name] = "/set"
        ctx.print(f"`{found.name}` set to `{value}` for this session.", style="success")
        ctx.ui.refresh_status()
        return
    try:
        path = save_setting(found.name, value)
    except (OSError, ValueError) as exc:
        raise CommandError(f"could not save {found.name} in config.toml: {exc}") from None
    ctx.print(
        f"`{found.name}` = `{value}` saved in `{path}`: it is read at start, so it takes "
        "effect the next time cave starts.",
        style="success",
    )
