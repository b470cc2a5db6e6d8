"""One headless registry of slash commands, shared by the TUI, the plain REPL and completion.

A command is a name, an argument synopsis, one line of help and an async handler
that receives a `CommandContext` (the session's `AppServices` and the front end's
`FrontEnd`) and the parsed arguments. Front ends never parse commands themselves: they
call `registry.dispatch(line, CommandContext(services, front_end))`.
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import AsyncIterable, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

Severity = Literal["information", "warning", "error"]  # a notification's (Textual's names)

if TYPE_CHECKING:
    from cave_tui.agent import CaveAgent
    from cave_tui.agent import events as ev
    from cave_tui.app.services import AppServices
    from cave_tui.dataio.progress import Progress
    from cave_tui.runtime.base import Runtime


class CommandError(Exception):
    """A command was misused; the message says how to use it correctly."""


class FrontEnd(Protocol):
    """What only a front end can do, one typed method per action (commands call them).

    A front end that has no use for an action (the plain REPL has no inspector) does
    nothing, or says it is not available there; it never ignores a misspelt action.
    """

    def print(self, text: str, *, style: str = "") -> None:
        """Show a line (Markdown allowed); *style* is "", info, success, warning, error or dim.

        Callable from any thread (a loader reports from its worker thread).
        """

    async def confirm(self, question: str) -> bool:
        """Ask a yes/no question; False when the front end cannot ask."""

    def progress(self, progress: Progress, label: str) -> None:
        """A long load's progress (called on the loader's thread, often)."""

    def theme_names(self) -> list[str]:
        """The themes `set_theme` accepts (empty when the front end has none)."""

    def current_theme(self) -> str:
        """The theme in use ('' when the front end has none)."""

    def quit(self) -> None:
        """Leave through the exit hooks."""

    def clear(self) -> None:
        """Clear what is shown (chat and log); the conversation is kept."""

    def set_theme(self, name: str) -> None:
        """Switch to theme *name* live (and keep it)."""

    def insert(self, text: str, *, replace: bool = False) -> None:
        """Put *text* in the input, at the cursor or in place of what is there."""

    def refresh_status(self) -> None:
        """Redraw the status line (model, policy, approval mode, …)."""

    def show(self, name: str) -> None:
        """Open the detail view of variable *name*."""

    def render(self, event: ev.Event) -> None:
        """Draw one core event as if it had streamed."""

    def replay_events(self, events: AsyncIterable[ev.Event]) -> None:
        """Draw an event stream as a live turn (cancellable); events go to the hooks."""

    def replay_session(self, folder: Path, *, speed: float = 1.0, trust: bool = False) -> None:
        """Replay a recorded session here, then continue live from it."""

    def session_loaded(self, transcript: list[ev.Event]) -> None:
        """`/load` replaced the conversation: draw the loaded one (its events)."""

    def notify(self, message: str, severity: Severity = "information") -> None:
        """A short message that goes away by itself."""


@dataclass
class CommandContext:
    """What a command handler gets: the session's services and its front end."""

    services: AppServices
    ui: FrontEnd

    @property
    def agent(self) -> CaveAgent | None:
        """The `CaveAgent`, or None until a model is configured."""
        return self.services.agent

    @property
    def runtime(self) -> Runtime | None:
        """The `Runtime`, or None until it is started (`await services.start()`)."""
        return self.services.runtime

    def print(self, text: str, *, style: str = "") -> None:
        self.ui.print(text, style=style)

    async def confirm(self, question: str) -> bool:
        return await self.ui.confirm(question)


Handler = Callable[[CommandContext, list[str]], Awaitable[None]]


@dataclass
class Command:
    name: str  # without the slash
    handler: Handler
    help: str  # one line
    args: str = ""  # synopsis, e.g. "NAME [PATH]"
    aliases: tuple[str, ...] = ()
    min_args: int = 0
    max_args: int | None = None
    completer: Callable[[CommandContext, str], list[str]] | None = field(default=None, repr=False)

    @property
    def usage(self) -> str:
        return f"/{self.name}" + (f" {self.args}" if self.args else "")


class CommandRegistry:
    def __init__(self) -> None:
        self._commands: dict[str, Command] = {}
        self._aliases: dict[str, str] = {}

    def add(self, command: Command) -> Command:
        if command.name in self._commands:
            raise ValueError(f"command /{command.name} is already registered")
        self._commands[command.name] = command
        for alias in command.aliases:
            self._aliases[alias] = command.name
        return command

    def command(
        self,
        name: str,
        help: str,
        args: str = "",
        *,
        aliases: tuple[str, ...] = (),
        min_args: int = 0,
        max_args: int | None = None,
    ) -> Callable[[Handler], Handler]:
        """Decorator form of `add`."""

        def wrap(handler: Handler) -> Handler:
            self.add(Command(name, handler, help, args, aliases, min_args, max_args))
            return handler

        return wrap

    def get(self, name: str) -> Command | None:
        name = name.lstrip("/")
        return self._commands.get(self._aliases.get(name, name))

    def all(self) -> list[Command]:
        return sorted(self._commands.values(), key=lambda c: c.name)

    def names(self) -> list[str]:
        return [c.name for c in self.all()]

    def suggest(self, name: str) -> str | None:
        close = difflib.get_close_matches(name.lstrip("/"), [*self._commands, *self._aliases], n=1)
        return close[0] if close else None

    def complete(self, text: str) -> list[tuple[str, str]]:
        """(completion, help) pairs for a partial `/name`."""
        if not text.startswith("/") or " " in text:
            return []
        prefix = text[1:]
        return [(f"/{c.name}", c.help) for c in self.all() if c.name.startswith(prefix)]

    @staticmethod
    def parse(line: str) -> tuple[str, list[str]]:
        """Split `/name arg "quoted arg"` into ("name", [args]); raises CommandError."""
        line = line.strip()
        if not line.startswith("/"):
            raise CommandError("commands start with /")
        try:
            parts = shlex.split(line[1:])
        except ValueError as exc:
            raise CommandError(f"could not parse the arguments: {exc}") from None
        if not parts:
            raise CommandError("empty command; try /help")
        return parts[0], parts[1:]

    async def dispatch(self, line: str, ctx: CommandContext) -> bool:
        """Run a slash command line. Returns False (after telling the user) when it failed.

        Unknown commands and bad arguments get a clear message and a suggestion,
        never an exception escaping to the front end.
        """
        try:
            name, args = self.parse(line)
        except CommandError as exc:
            ctx.print(f"{exc}", style="error")
            return False
        command = self.get(name)
        if command is None:
            hint = self.suggest(name)
            extra = f" Did you mean /{hint}?" if hint else ""
            ctx.print(f"Unknown command /{name}.{extra} Type /help for the list.", style="error")
            return False
        if len(args) < command.min_args or (
            command.max_args is not None and len(args) > command.max_args
        ):
            ctx.print(f"Usage: {command.usage} — {command.help}", style="error")
            return False
        session = ctx.services.session
        if session is not None:  # a session that ran only commands is named by the first
            session.name_from(line)
        try:
            await command.handler(ctx, args)
        except CommandError as exc:
            ctx.print(f"/{command.name}: {exc}", style="error")
            return False
        except Exception as exc:  # a failing command must never take the app down
            ctx.print(f"/{command.name} failed: {type(exc).__name__}: {exc}", style="error")
            return False
        return True


registry = CommandRegistry()
"""The process-wide registry; command modules register into it at import."""
