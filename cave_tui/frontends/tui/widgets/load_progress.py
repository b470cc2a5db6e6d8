"""`LoadBars`: a progress bar in the chat for each file a command loads or writes.

The core reports a load's progress as typed `Progress` records (dataio/progress.py), which
reach the app as `LoadProgress` messages; each file gets one `LoadBar` (a Textual
`ProgressBar` and a line saying the stage and the bytes, rows or row groups done), updated
in place. While one is shown Esc or Ctrl+C cancels the command (a cancelled load injects
nothing); the bars go when the command ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Horizontal, VerticalGroup
from textual.widgets import ProgressBar, Static

from cave_tui.app.commands.data import progress_amount
from cave_tui.printable import plain_text

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from cave_tui.dataio.progress import Progress
    from cave_tui.frontends.tui.widgets.chat import ChatPane

CANCEL_HINT = "Esc or Ctrl+C cancels"


class LoadBar(VerticalGroup):
    """One file's progress: what is done (stage, name, amount), and the bar."""

    DEFAULT_CSS = """
    LoadBar { margin: 1 0 0 0; padding: 0 1; height: auto; color: $text-muted; }
    LoadBar Horizontal { height: 1; }
    LoadBar ProgressBar { width: auto; }
    LoadBar Bar { width: 24; }
    LoadBar .load-hint { width: auto; padding: 0 0 0 2; color: $text-muted; }
    """

    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label
        self.line = Static("", classes="load-line")
        self.bar = ProgressBar(total=None, show_eta=False)
        self.text = ""

    def compose(self) -> ComposeResult:
        yield self.line
        with Horizontal():
            yield self.bar
            yield Static(CANCEL_HINT, classes="load-hint")

    def show(self, progress: Progress) -> None:
        """Draw *progress* (the amount in its own units, e.g. bytes then rows)."""
        self.text = f"{progress.stage} {self.label} · {progress_amount(progress)}"
        self.line.update(plain_text(self.text, one_line=True))  # a file's name
        self.bar.update(total=progress.total or None, progress=progress.done)


class LoadBars:
    """The chat's progress bars, one per file, while a command runs."""

    def __init__(self, chat: ChatPane) -> None:
        self.chat = chat
        self.bars: dict[str, LoadBar] = {}

    @property
    def running(self) -> bool:
        """A load or write shows its progress now (Esc and Ctrl+C cancel it)."""
        return bool(self.bars)

    def show(self, progress: Progress, label: str) -> LoadBar:
        key = progress.path or label
        bar = self.bars.get(key)
        if bar is None or bar.parent is None:
            bar = self.bars[key] = LoadBar(label)
            self.chat.mount(bar)
        bar.show(progress)
        return bar

    def finish(self) -> None:
        """The command ended (done, failed or cancelled): its bars go."""
        for bar in self.bars.values():
            bar.remove()
        self.bars.clear()
