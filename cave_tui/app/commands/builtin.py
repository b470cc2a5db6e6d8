"""The built-in slash commands: help, namespace, model, policy, approval, theme, skills, cost, …

Handlers get a `CommandContext`: `ctx.services` (the session's `AppServices`) and
`ctx.ui`, the typed `FrontEnd` (print, confirm and one method per front-end action).
"""

from __future__ import annotations

import difflib
from typing import Any

from cave_tui.agent import events as ev
from cave_tui.app.commands.registry import CommandContext, CommandError, registry
from cave_tui.app.config import APPROVE_MODES, POLICIES


async def _runtime(ctx: CommandContext) -> Any:
    """The runtime, started first if the front end has not started it yet."""
    if ctx.runtime is None:
        await ctx.services.start()
    return ctx.runtime


def _need_agent(ctx: CommandContext) -> Any:
    if ctx.agent is None:
        raise CommandError("no model is configured: set one with /model NAME (or try `cave demo`)")
    return ctx.agent


async def _existing(ctx: CommandContext, name: str) -> Any:
    try:
        return await (await _runtime(ctx)).retrieve(name)
    except KeyError as exc:
        raise CommandError(str(exc).strip("'\"")) from None


@registry.command("help", "List the commands, or explain one", "[COMMAND]", max_args=1)
async def help_(ctx: CommandContext, args: list[str]) -> None:
    if args:
        command = registry.get(args[0])
        if command is None:
            hint = registry.suggest(args[0])
            extra = f" Did you mean /{hint}?" if hint else ""
            raise CommandError(f"no command /{args[0].lstrip('/')}.{extra}")
        aliases = (
            f" (also {', '.join('/' + a for a in command.aliases)})" if command.aliases else ""
        )
        ctx.print(f"`{command.usage}`{aliases}: {command.help}")
        return
    lines = ["**Commands**", ""]
    lines += [f"- `{c.usage}`: {c.help}" for c in registry.all()]
    lines += [
        "",
        "Type a task to give it to the agent; start a line with `!` to run Python directly "
        "in the namespace (no model).",
    ]
    ctx.print("\n".join(lines))


@registry.command("vars", "List the variables in the namespace", "[FILTER]", max_args=1)
async def vars_(ctx: CommandContext, args: list[str]) -> None:
    from cave_tui.app.detail import human_bytes

    rows = await (await _runtime(ctx)).namespace_summary()
    if args:
        rows = [r for r in rows if args[0].lower() in r.name.lower()]
    if not rows:
        ctx.print("No variables" + (f" matching {args[0]!r}." if args else " yet."))
        return
    lines = ["| name | type | shape | size |", "|---|---|---|---|"]
    for row in rows[:200]:
        size = human_bytes(row.size_bytes) if row.kind == "variable" else ""
        lines.append(f"| {row.name} | {row.type_name} | {row.shape_text()} | {size} |")
    if len(rows) > 200:
        lines.append(f"| … {len(rows) - 200:,} more | | | |")
    ctx.print("\n".join(lines))


@registry.command("show", "Open the detail view of a variable", "NAME", min_args=1, max_args=1)
async def show(ctx: CommandContext, args: list[str]) -> None:
    await _existing(ctx, args[0])
    ctx.ui.show(args[0])


@registry.command("del", "Delete a variable from the namespace", "NAME", min_args=1, max_args=1)
async def delete(ctx: CommandContext, args: list[str]) -> None:
    runtime = await _runtime(ctx)
    try:
        await runtime.delete(args[0])
    except KeyError as exc:
        raise CommandError(str(exc).strip("'\"")) from None
    ctx.print(f"Deleted `{args[0]}`.", style="success")  # the runtime tells the inspector


def _names(names: list[str], shown: int = 8) -> str:
    text = ", ".join(f"`{name}`" for name in names[:shown])
    return text + (f" and {len(names) - shown} more" if len(names) > shown else "")


@registry.command("reset", "Clear the namespace and the conversation", max_args=0)
async def reset(ctx: CommandContext, args: list[str]) -> None:
    runtime = await _runtime(ctx)
    kept = sorted(runtime.given_names())  # what the user gave: not the host's own tools
    restore = (
        f" Injected objects ({_names(kept)}) are put back as they were injected." if kept else ""
    )
    question = "Reset? This clears the conversation and every variable made since the start."
    if not await ctx.confirm(question + restore):
        ctx.print("Reset cancelled.")
        return
    await runtime.reset()
    if ctx.agent is not None:
        ctx.agent.reset_history()
    ctx.ui.clear()
    done = f" Kept, as injected: {_names(kept)}." if kept else ""
    ctx.print("Namespace and conversation reset." + done, style="success")


@registry.command(
    "model",
    "Show the model and the local servers found, or switch (URL: its server, named by you)",
    "[NAME [URL]]",
    max_args=2,
)
async def model(ctx: CommandContext, args: list[str]) -> None:
    services = ctx.services
    if not args:
        from cave_tui.models.discovery import describe_found, discover

        found = "\n".join(f"    {line}" for line in describe_found(await discover()))
        ctx.print(f"Model: `{services.model_label}`\n\nFound on this machine:\n\n{found}")
        return
    try:
        services.set_model(args[0], api_base=args[1] if len(args) > 1 else None)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    ctx.print(f"Model set to `{services.model_label}` (the conversation is kept).", style="success")
    ctx.ui.refresh_status()


@registry.command(
    "policy",
    "Show the security checker's policy (the guard setting), or set it",
    "[trusted|standard|strict]",
    max_args=1,
)
async def policy(ctx: CommandContext, args: list[str]) -> None:
    services = ctx.services
    if not args:
        current = services.config.guard
        ctx.print(f"Policy: `{current}` (choices: {', '.join(POLICIES)})")
        return
    name = args[0].lower()
    if name not in POLICIES:
        close = difflib.get_close_matches(name, POLICIES, n=1)
        hint = f" Did you mean {close[0]}?" if close else ""
        raise CommandError(f"unknown policy {args[0]!r}: use {', '.join(POLICIES)}.{hint}")
    services.set_policy(name)
    ctx.print(f"Policy set to `{name}`.", style="success")
    ctx.ui.refresh_status()


@registry.command(
    "policies",
    "Show the agent's aids (policies), or choose them",
    "[auto|small|lean|guided|minimal|strict|off|SPEC]",
    max_args=1,
)
async def policies(ctx: CommandContext, args: list[str]) -> None:
    from cave_tui.agent.policies import PRESETS, UnknownPolicyError, describe_policies

    services = ctx.services
    if args:
        try:
            services.set_policies(args[0])
        except UnknownPolicyError as exc:
            raise CommandError(str(exc)) from None
        said = f"Policies set to `{services.config.policies}`."
        if services.config.policies == "auto":
            said += f" By the model's class: {services.preset_text()}."
        ctx.print(said, style="success")
        ctx.ui.refresh_status()
        return
    active = set(services.policy_names())
    lines = [
        f"Policies: {services.preset_text()} (presets: {', '.join(PRESETS)}, auto)",
        "`auto` picks `small` for the embedded model and small local models, `lean` otherwise.",
        "",
    ]
    for name, line in describe_policies():
        mark = "on " if name in active else "off"
        lines.append(f"- {mark} `{name}`: {line}")
    lines += ["", "Set with `/policies lean`, or a spec like `/policies small,-look_first`."]
    ctx.print("\n".join(lines))


@registry.command(
    "restore", "Put back an object you gave, as you gave it", "NAME", min_args=1, max_args=1
)
async def restore(ctx: CommandContext, args: list[str]) -> None:
    runtime = await _runtime(ctx)
    name = args[0]
    given = runtime.given_names()
    if name not in given:
        listed = ", ".join(sorted(given)) if given else "none yet"
        raise CommandError(f"`{name}` is not an object you gave (given: {listed})")
    runtime.inject(runtime.injected[name])
    ctx.print(f"Restored `{name}` as you gave it.", style="success")
    ctx.ui.refresh_status()


@registry.command(
    "approve", "Ask before running each code block, or run at once", "[ask|auto]", max_args=1
)
async def approve(ctx: CommandContext, args: list[str]) -> None:
    config = ctx.services.config
    if not args:
        ctx.print(f"Approval: `{config.approve}` (ask or auto)")
        return
    mode = args[0].lower()
    if mode not in APPROVE_MODES:
        raise CommandError(f"unknown mode {args[0]!r}: use ask or auto")
    config.approve = mode
    text = (
        "each code block is shown with Run / Edit / Skip before it runs"
        if mode == "ask"
        else "code runs as soon as the model writes it"
    )
    ctx.print(f"Approval `{mode}`: {text}.", style="success")
    ctx.ui.refresh_status()


@registry.command("theme", "List the themes, or switch to one", "[NAME]", max_args=1)
async def theme(ctx: CommandContext, args: list[str]) -> None:
    themes = ctx.ui.theme_names()
    if not themes:
        raise CommandError("this front end has no themes")
    if not args:
        current = ctx.ui.current_theme()
        ctx.print("Themes: " + ", ".join(f"**{t}**" if t == current else t for t in themes))
        return
    name = args[0]
    if name not in themes:
        close = difflib.get_close_matches(name, themes, n=1)
        hint = f" Did you mean {close[0]}?" if close else ""
        raise CommandError(f"unknown theme {name!r}.{hint} Type /theme for the list.")
    ctx.ui.set_theme(name)


@registry.command("skills", "List the skills the agent can activate", max_args=0)
async def skills(ctx: CommandContext, args: list[str]) -> None:
    agent = _need_agent(ctx)
    found = list(getattr(agent, "skills", []) or [])
    if not found:
        ctx.print("No skills loaded. Start with `--skills DIR` to add some.")
        return
    ctx.print("\n".join(f"- **{s.name}**: {s.description}" for s in found))


@registry.command("skill", "Show one skill", "NAME", min_args=1, max_args=1)
async def skill(ctx: CommandContext, args: list[str]) -> None:
    agent = _need_agent(ctx)
    found = {s.name: s for s in getattr(agent, "skills", []) or []}
    chosen = found.get(args[0])
    if chosen is None:
        close = difflib.get_close_matches(args[0], list(found), n=1)
        hint = f" Did you mean {close[0]}?" if close else ""
        raise CommandError(f"no skill named {args[0]!r}.{hint} Type /skills for the list.")
    lines = [f"**{chosen.name}**: {chosen.description}"]
    for attr in ("path", "directory", "location"):
        where = getattr(chosen, attr, None)
        if where:
            lines.append(f"location: `{where}`")
            break
    lines.append(
        f"The agent loads its instructions with `activate_skill({chosen.name!r})` when needed."
    )
    ctx.print("\n".join(lines))


@registry.command("compact", "Compact the conversation now to free context", max_args=0)
async def compact(ctx: CommandContext, args: list[str]) -> None:
    agent = _need_agent(ctx)
    compactor = agent.compactor
    if compactor is None or not hasattr(compactor, "compact_now"):
        ctx.print(
            "Compaction is not configured for this agent (it needs a context window).",
            style="warning",
        )
        return
    step = len(agent.history)
    done = False
    async for event in compactor.compact_now(step, requested=True):
        if not isinstance(event, ev.CompactedEvent):
            ctx.ui.render(event)
        elif event.tokens_after < event.tokens_before:
            # The outcome is told once, here: rendered too, the event would say
            # "compacted" even when nothing was.
            ctx.print(
                f"Compacted: {event.tokens_before:,} → {event.tokens_after:,} tokens.",
                style="success",
            )
            done = True
    if not done:
        ctx.print("Nothing to compact yet.")


@registry.command("cost", "Tokens used so far and the cost estimate", max_args=0)
async def cost(ctx: CommandContext, args: list[str]) -> None:
    agent = _need_agent(ctx)
    usage = agent.usage
    line = (
        f"{usage.prompt_tokens:,} tokens in, {usage.completion_tokens:,} out, "
        f"{usage.model_calls} model calls"
    )
    estimate = await ctx.services.cost(usage)
    if estimate is not None:
        line += f"; about ${estimate:.4f} (litellm's price map)"
    else:
        line += "; no price known for this model"
    ctx.print(line)


@registry.command("clear", "Clear the chat and the log (the conversation is kept)", max_args=0)
async def clear(ctx: CommandContext, args: list[str]) -> None:
    ctx.ui.clear()


@registry.command("quit", "Quit cave", aliases=("exit", "q"), max_args=0)
async def quit_(ctx: CommandContext, args: list[str]) -> None:
    ctx.ui.quit()


@registry.command("config", "Show the settings and where each came from", max_args=0)
async def config(ctx: CommandContext, args: list[str]) -> None:
    from cave_tui.app.config import config_path, describe

    lines = [f"Config file: `{config_path()}`", "", "| setting | value | from |", "|---|---|---|"]
    lines += [f"| {n} | {v} | {s} |" for n, v, s in describe(ctx.services.config)]
    ctx.print("\n".join(lines))
