"""`display=True`: a Rich rendering of the event stream for library users.

Prose is rendered as Markdown once each reply is complete, code is highlighted,
long output is folded to its head and tail, and a closing line gives steps,
time and tokens.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path
from weakref import WeakKeyDictionary

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from cave_tui.agent import events as ev
from cave_tui.agent.extraction import prose_of
from cave_tui.agent.response import AgentResponse, RunDone
from cave_tui.printable import plain_text, printable

FOLD_LINES = 20


def fold(text: str, lines: int = FOLD_LINES) -> str:
    """Keep the first and last *lines* // 2 lines of *text*."""
    rows = text.splitlines()
    if len(rows) <= lines:
        return text
    half = lines // 2
    hidden = len(rows) - 2 * half
    return "\n".join([*rows[:half], f"… {hidden} lines folded …", *rows[-half:]])


_LEADS_TOLD: WeakKeyDictionary[Console, set[str]] = WeakKeyDictionary()


@functools.cache
def _stdout_console() -> Console:
    """The console of displays given none: one per process, so what is told once on it (a
    reply lead) stays told across runs. It writes to whatever `sys.stdout` is then."""
    return Console(highlight=False)


class RichDisplay:
    """Render events to a terminal as they arrive."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or _stdout_console()
        self._text: list[str] = []
        self._text_agent: str | None = None
        self._streamed: set[tuple[str | None, int]] = set()  # cells whose output was streamed
        # a reply lead is the same each turn: told once on a console, however many displays
        # the front end makes for it (one per turn, or one per event)
        self._leads_told = _LEADS_TOLD.setdefault(self.console, set())

    def _flush_prose(self) -> None:
        text = prose_of("".join(self._text))
        self._text.clear()
        if text.strip():
            if self._text_agent:  # a sub-agent's prose: say whose it is
                self.console.print(plain_text(f"[{self._text_agent}]", "dim"))
            self.console.print(Markdown(printable(text)))

    def render(self, event: ev.Event) -> None:
        event = ev.typed(event)  # upstream's code may build bare Event(EventType.X, ...)
        who = printable(f"[{event.agent}] ") if event.agent else ""
        match event:
            case ev.UserEvent():
                self.console.print(plain_text(f"{who}› {event.content}", "bold cyan"))
            case ev.TextEvent():
                if self._text and event.agent != self._text_agent:
                    self._flush_prose()
                self._text_agent = event.agent
                self._text.append(event.written)
            case ev.CodeEvent():
                self._flush_prose()
                self.console.print(
                    Panel(
                        Syntax(
                            printable(event.code).rstrip(),
                            "python",
                            theme="ansi_dark",
                            word_wrap=True,
                        ),  # a long line wraps: code is shown whole, never cut at the width
                        title=Text(f"{who}step {event.step}"),  # not markup
                    )
                )
            case ev.OutputEvent():  # a running cell's output, as it is printed
                self._streamed.add((event.agent, event.step))
                if event.dropped:
                    self.console.print(Text(f"[… {event.dropped:,} characters …]", style="dim"))
                self.console.print(plain_text(event.content, "dim"), end="")
            case ev.ExecutionOutputEvent():
                if (event.agent, event.step) in self._streamed:
                    self._streamed.discard((event.agent, event.step))  # shown as it came
                elif event.output.strip():
                    self.console.print(plain_text(fold(event.output.rstrip()), "dim"))
                self._kept(event)
                print_saved_figures(self.console, event)
            case ev.ExecutionErrorEvent() | ev.SecurityErrorEvent():
                output = event.output if isinstance(event, ev.ExecutionErrorEvent) else ""
                if (event.agent, event.step) in self._streamed:
                    self._streamed.discard((event.agent, event.step))  # shown as it came
                elif output.strip() and output not in event.content:  # e.g. a resumed cell
                    self.console.print(plain_text(fold(output.rstrip()), "dim"))
                self.console.print(plain_text(fold(event.content.rstrip()), "red"))
                if isinstance(event, ev.ExecutionErrorEvent):  # what it drew before failing
                    self._kept(event)
                    print_saved_figures(self.console, event)
            case ev.FinalResponseEvent():
                self._flush_prose()
                if event.unseen:
                    self._answer(event)
                if event.unsupported:
                    self.console.print(Text(f"{who}{ev.UNSUPPORTED_MARK}", style="bold yellow"))
            case ev.RetryEvent() | ev.NoticeEvent():
                self.console.print(plain_text(f"{who}{event.content}", "yellow"))
            case ev.ErrorEvent() | ev.MaxStepsReachedEvent():
                self._flush_prose()
                self.console.print(plain_text(f"{who}{event.content}", "bold red"))
            case ev.CompactedEvent():
                self.console.print(Text(f"{who}context compacted", style="yellow"))
            case ev.InterventionEvent() if event.kind is ev.InterventionKind.LEAD:
                if event.policy not in self._leads_told:
                    self._leads_told.add(event.policy)
                    self._flush_prose()
                    self.console.print(plain_text(f"{who}{intervention_line(event)}", "magenta"))
            case ev.InterventionEvent():
                self._flush_prose()
                self.console.print(plain_text(f"{who}{intervention_line(event)}", "magenta"))
            case _:
                pass  # step, usage, compacting, cancelled: nothing to print

    def _kept(self, event: ev.CellResultEvent) -> None:
        """Say where an output too long for the model is kept whole (`_output_N`)."""
        if event.persisted_variable:
            line = f"output kept whole in the namespace as {event.persisted_variable}"
            self.console.print(plain_text(line, "dim italic"))

    def _answer(self, event: ev.FinalResponseEvent) -> None:
        """A final_answer() reply: never streamed as prose, so it is printed here."""
        if not event.content.strip():
            return
        if event.agent:
            self.console.print(plain_text(f"[{event.agent}]", "dim"))
        self.console.print(answer_renderable(event.content))  # the kernel's final_answer text

    def flush(self) -> None:
        """Print the prose still held back (it is printed once its reply is complete)."""
        self._flush_prose()

    def close(self, response: AgentResponse) -> None:
        self._flush_prose()
        usage = response.usage
        self.console.print(
            Text(
                f"{response.status.value} · {response.steps} steps · {response.elapsed:.1f}s · "
                f"{usage.prompt_tokens:,} in / {usage.completion_tokens:,} out tokens",
                style="dim",
            )
        )


def figure_lines(event: ev.CellResultEvent) -> list[str]:
    """`figure saved: PATH` for each figure the cell's event was saved as (relative to
    the working folder when inside it); a figure not saved (no session) is counted."""
    lines = []
    for path in event.saved_figures:
        shown = os.path.relpath(path) if Path(path).resolve().is_relative_to(Path.cwd()) else path
        lines.append(f"figure saved: {shown}")
    unsaved = len(event.figures) - len(event.saved_figures)
    if unsaved > 0:
        lines.append(f"{unsaved} figure(s) made, not saved (no session is recorded)")
    return lines


def print_saved_figures(console: Console, event: ev.CellResultEvent) -> None:
    """Print `figure_lines` (plain text: the path holds no markup)."""
    for line in figure_lines(event):
        console.print(Text(line, style="cyan"))


def is_preformatted(text: str) -> bool:
    """*text* is laid out in columns (a DataFrame's or Series' repr, a printed table): most of
    its lines, two at least, have a run of spaces inside them; a Markdown table is not."""
    lines = [line for line in text.splitlines() if line.strip()]
    if any(line.lstrip().startswith("|") for line in lines):  # a Markdown table
        return False
    aligned = sum(1 for line in lines if _INNER_SPACES.search(line))
    return len(lines) >= 2 and aligned * 2 >= len(lines)


_INNER_SPACES = re.compile(r"\S {2,}\S")


def answer_renderable(text: str) -> Markdown | Text:
    """A final_answer() answer to print: a table's text as its lines (Markdown would join them
    into one paragraph), folded rather than cut when wider than the terminal; prose as Markdown."""
    if is_preformatted(text):
        out = plain_text(text.strip("\n"))
        out.no_wrap, out.overflow = True, "fold"
        return out
    return Markdown(printable(text))


def intervention_line(event: ev.InterventionEvent, width: int = 160) -> str:
    """One line for a policy's intervention: `[policy kind] first line of what it told`;
    a first line that ends with a colon goes on with the list items after it ("; ")."""
    lines = event.content.strip().splitlines()
    first = lines[0] if lines else ""
    if first.endswith(":"):
        items = [line[2:].strip() for line in lines[1:] if line.startswith("- ")]
        if items:
            first = f"{first} {'; '.join(items)}"
    if len(first) > width:
        first = first[: width - 1] + "…"
    return f"[{event.policy} {event.kind.value}] {first}"


async def rendered(
    events: AsyncIterator[ev.Event | RunDone],
) -> AsyncIterator[ev.Event | RunDone]:
    """*events* passed on, each rendered with a `RichDisplay` on the way; the run's end
    (its `RunDone`) closes it with the run's summary line."""
    display = RichDisplay()
    async for item in events:
        match item:
            case RunDone():
                display.close(item.response)
            case ev.Event():
                display.render(item)
        yield item
