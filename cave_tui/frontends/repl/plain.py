"""`cave --plain`: a line-mode REPL (prompt_toolkit) over the same services and commands.

History is shared with the app (prompt_toolkit's `FileHistory` on the same file);
`/` completes commands with their help; `!` runs Python directly; a task streams
the agent's events through the same Rich display `cave run` uses. Ctrl+C during a
turn interrupts it (the partial output is kept), during a command cancels it (a
cancelled `/inject` injects nothing); Ctrl+D or /quit leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterable, Iterable
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, InMemoryHistory
from rich.console import Console
from rich.markdown import Markdown
from rich.text import Text

from cave_tui.agent import events as ev
from cave_tui.agent.display import RichDisplay, fold, print_saved_figures
from cave_tui.app.commands import CommandContext, load_commands, registry
from cave_tui.app.commands.registry import Severity
from cave_tui.app.config import history_path
from cave_tui.app.console_front_end import ConsoleFrontEnd
from cave_tui.app.services import NO_MODEL_HELP, AppServices
from cave_tui.app.startup import abort_start
from cave_tui.frontends.terminal_modes import echo_off
from cave_tui.printable import plain_text, printable

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output

STYLES = {"error": "bold red", "warning": "yellow", "success": "green", "info": ""}


class SlashCompleter(Completer):
    """Completes `/name` with each command's one-line help as the meta text."""

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        text = document.text_before_cursor
        for name, help_ in load_commands().complete(text):
            yield Completion(name, start_position=-len(text), display_meta=help_)


class ReplFrontEnd(ConsoleFrontEnd):
    """`FrontEnd` for line mode: what has no meaning here (an inspector) does nothing."""

    def __init__(self, services: AppServices, console: Console, session: PromptSession[str]):
        super().__init__(services, console)
        self.session = session
        self.quit_requested = False

    def print(self, text: str, *, style: str = "") -> None:
        rich_style = STYLES.get(style, "")
        if rich_style:
            self.console.print(plain_text(text, rich_style))
        else:
            self.console.print(Markdown(printable(text)))  # may hold names, reprs, files

    async def confirm(self, question: str) -> bool:
        try:
            answer = await self.session.prompt_async(f"{question} [y/N] ")
        except (EOFError, KeyboardInterrupt):
            return False
        return answer.strip().lower() in ("y", "yes")

    def quit(self) -> None:
        self.quit_requested = True

    def clear(self) -> None:
        self.console.clear()

    def set_theme(self, name: str) -> None:
        self.print("Themes are not available in --plain mode.", style="warning")

    def replay_events(self, events: AsyncIterable[ev.Event]) -> None:
        self.print("Replaying events is not available in --plain mode.", style="warning")

    def session_loaded(self, transcript: list[ev.Event]) -> None:
        draw_transcript(self.console, transcript)

    def notify(self, message: str, severity: Severity = "information") -> None:
        self.print(message, style="warning" if severity != "information" else "")


async def run_turn(services: AppServices, task: str, console: Console) -> None:
    """Stream one turn to the console; Ctrl+C cancels it (the core interrupts the cell)."""
    display = RichDisplay(console)
    usage = [0, 0]

    async def consume() -> None:
        async for event in services.stream(task):
            if isinstance(event, ev.UserEvent):
                continue  # the user just typed it
            display.render(event)
            if isinstance(event, ev.UsageEvent):
                usage[0] += event.prompt_tokens
                usage[1] += event.completion_tokens

    await _interruptible(consume(), console)
    display._flush_prose()
    console.print(Text(f"{usage[0]:,} in / {usage[1]:,} out tokens", style="dim"))


async def run_python(services: AppServices, code: str, console: Console) -> None:
    async def consume() -> None:
        streamed = False
        async for event in services.run_python(code):
            match event:
                case ev.OutputEvent():  # printed while it runs
                    streamed = True
                    console.print(plain_text(event.content), end="")
                case ev.ExecutionOutputEvent():
                    output = event.output.rstrip()
                    if output and not streamed:
                        console.print(plain_text(fold(output)))
                    print_saved_figures(console, event)
                case ev.ExecutionErrorEvent():
                    console.print(plain_text(fold(event.content.rstrip()), "red"))
                    print_saved_figures(console, event)  # what it drew before failing
                case ev.NoticeEvent():
                    console.print(plain_text(event.content, "yellow"))

    await _interruptible(consume(), console)


async def run_command(line: str, ctx: CommandContext, front_end: ReplFrontEnd) -> None:
    """Run a slash command; Ctrl+C cancels it (a cancelled `/inject` injects nothing and
    says so) and the prompt comes back."""

    async def dispatch() -> None:
        await registry.dispatch(line, ctx)
        await front_end.drain()

    await _interruptible(dispatch(), front_end.console, interrupted=None)


INTERRUPTED = "Interrupted: the partial output is kept."


async def _interruptible(
    coro: Any, console: Console, interrupted: str | None = INTERRUPTED
) -> None:
    """Await *coro* as a task that Ctrl+C (SIGINT) cancels, then print *interrupted*."""
    task = asyncio.ensure_future(coro)
    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGINT)
    installed = False
    try:
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        installed = True
    except (NotImplementedError, RuntimeError, ValueError):
        pass
    try:
        await task
    except asyncio.CancelledError:
        if not task.cancelled():
            raise
        if interrupted:
            console.print(Text(interrupted, style="yellow"))
    except Exception as exc:
        console.print(plain_text(f"Error: {type(exc).__name__}: {exc}", "bold red"))
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
            if previous is not None:
                signal.signal(signal.SIGINT, previous)  # asyncio.run's own, for the prompt


async def repl_main(
    services: AppServices,
    *,
    console: Console | None = None,
    input: Input | None = None,
    output: Output | None = None,
    history: bool = True,
) -> int:
    """Read lines until /quit or Ctrl+D; returns the exit code."""
    load_commands()
    console = console or Console()
    session: PromptSession[str] = PromptSession(
        history=FileHistory(str(_history_file())) if history else InMemoryHistory(),
        completer=SlashCompleter(),
        complete_while_typing=True,
        input=input,
        output=output,
    )
    front_end = ReplFrontEnd(services, console, session)
    services.progress_hooks.append(front_end.progress)  # `--inject` at start, `--dump` at exit
    ctx = CommandContext(services, front_end)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            try:
                loop.add_signal_handler(sig, lambda: _on_signal(services, stop, main))
            except (NotImplementedError, RuntimeError, ValueError):
                pass
    # Text typed while cave works (start-up, a turn, a command) is not echoed into the
    # output: it waits, and appears after the next prompt. Echo stays off between prompts,
    # not only within a turn, so no gap opens between a turn's end and the prompt's raw
    # mode (prompt_toolkit puts back the modes it found: echo off).
    quiet = contextlib.ExitStack()
    if input is None:
        quiet.enter_context(echo_off())
    try:
        console.print(
            Text("cave --plain · /help for commands · ! runs Python · Ctrl+D quits", style="dim")
        )
        for notice in services.notices:
            console.print(plain_text(notice, "yellow"))
        services.notices.clear()
        if services.model is None:
            console.print(Markdown(NO_MODEL_HELP))
        try:
            await services.start()
        except asyncio.CancelledError:
            if stop.is_set():
                raise
            raise await abort_start(services) from None  # Ctrl+C during the start-up
        finally:
            front_end.progress_lines.stop()
        console.print(Text(services.boundary_notice, style="dim"))
        draw_transcript(console, services.transcript)
        services.transcript.clear()
        while not front_end.quit_requested and not stop.is_set():
            try:
                line = await session.prompt_async("cave› ")
            except KeyboardInterrupt:
                continue
            except EOFError:
                break
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                await run_command(text, ctx, front_end)
            elif text.startswith("!"):
                await run_python(services, text[1:].lstrip(), console)
            elif services.agent is None:
                console.print(Markdown(NO_MODEL_HELP))
            else:
                await run_turn(services, line, console)
    except asyncio.CancelledError:
        if not stop.is_set():
            raise
    finally:
        try:
            await services.shutdown(leave_on_signals=True)  # Ctrl+C again: leave now
        finally:
            front_end.progress_lines.stop()
            quiet.close()
    return 0


def draw_transcript(console: Console, events: list[ev.Event]) -> None:
    """A resumed or loaded session's turns, printed as they were shown live."""
    display = RichDisplay(console)
    for event in events:
        display.render(event)
    display.flush()


def _on_signal(services: AppServices, stop: asyncio.Event, main: Any) -> None:
    services.note_exit("terminated")
    stop.set()
    if main is not None:
        main.cancel()


def _history_file() -> Any:
    path = history_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def run_repl(services: AppServices) -> int:
    return asyncio.run(repl_main(services))
