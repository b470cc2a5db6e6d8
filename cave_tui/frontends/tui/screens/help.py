"""F1: keys, commands and how input works."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from cave_tui.app.commands import registry
from cave_tui.frontends.tui.screens.base import CaveModal

KEYS = """\
| key | what it does |
|---|---|
| Enter | send the task (or run the `/command`) |
| Ctrl+J, Alt+Enter | new line in the input |
| ↑ / ↓ | previous / next input from history |
| Tab | complete a `/command` |
| Shift+Tab | focus the inspector, its filter, the log, the chat; then Tab moves on |
| ↑ ↓ PgUp PgDn Home End | scroll the chat or the log that has the focus |
| typing, pasting | in the chat, the log or the inspector: goes to the input |
| Ctrl+C | interrupt the running cell or model stream; twice quits |
| Esc | cancel the running turn (or the file being loaded) |
| Ctrl+Q | quit |
| Ctrl+P | command palette (every command) |
| F2 | inspector: focus it (wide) or show/hide it (narrow) |
| Enter (inspector) | open the detail view of the variable (after text typed there: send the line) |
| Ctrl+J (approval Edit) | new line in the code |
| Ctrl+O | unfold (or fold) the newest long output in the log |
| Ctrl+F | search the chat and the log: Enter/F3 next, Shift+Enter/Shift+F3 previous, Esc closes |
| Ctrl+Y | copy the focused cell, output, reply or answer to the clipboard (OSC 52) |
| F1 | this help |
"""


def _cell(text: str) -> str:
    """Text for a Markdown table cell: a `|` (as in `[ask|auto]`) would end the cell."""
    return text.replace("|", "\\|")


def help_markdown() -> str:
    commands = "\n".join(f"| `{_cell(c.usage)}` | {_cell(c.help)} |" for c in registry.all())
    return (
        "# cave\n\nType a task and the agent answers by writing Python that runs in a live "
        "namespace. Start a line with `!` to run Python yourself (no model): "
        "`!df.describe()`.\n\n## Keys\n\n"
        + KEYS
        + "\n## Commands\n\n| command | what it does |\n|---|---|\n"
        + commands
        + "\n\nKey bindings can be remapped in `config.toml` (`[keymap]`, see docs/tui.md)."
    )


class HelpScreen(CaveModal[None]):
    DEFAULT_CSS = """
    HelpScreen #help-box { height: 90%; }
    """
    BINDINGS = [Binding("escape,f1,q", "dismiss_help", "Close", priority=True)]

    def __init__(self) -> None:
        super().__init__()

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box", classes="modal-box"):
            yield Markdown(help_markdown())

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
