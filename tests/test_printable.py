"""Kernel text reaches the user's terminal as text: never terminal commands, bidi
reordering or markup."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from cave_tui.agent import events as ev
from cave_tui.agent.display import RichDisplay
from cave_tui.printable import plain_text, printable, printable_line

FINAL_ANSWER = ev.AnswerSource.FINAL_ANSWER

ATTACKS = [
    "\x1b]52;c;cm0gLXJmIH4K\x07",  # OSC 52: set the clipboard (BEL-terminated)
    "\x1b]52;c;cm0gLXJmIH4K\x1b\\",  # the same, ST-terminated (Rich keeps ESC)
    "\x1b]0;new title\x1b\\",  # retitle the window
    "\x1b[2J\x1b[H",  # clear the screen, cursor home: then draw a fake prompt
    "\x1bP+q544e\x1b\\",  # DCS request (answers go to the tty's input)
    "\x9b2J",  # 8-bit CSI
    "\x9d52;c;eA==\x9c",  # 8-bit OSC to 8-bit ST
    "\x1b[6n",  # cursor position report: the terminal types an answer
    "\x1bc",  # full reset
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_escape_sequences_are_dropped_and_the_text_kept(attack: str):
    shown = printable(f"before {attack}after\n\tindented ünïcødé ✓")
    assert shown == "before after\n\tindented ünïcødé ✓"
    assert not any((ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F for c in shown)


def test_the_rich_display_shows_a_cells_output_without_its_escapes():
    out = io.StringIO()
    display = RichDisplay(Console(file=out, force_terminal=True, color_system="truecolor"))
    payload = "".join(ATTACKS)
    display.render(ev.OutputEvent(content=f"hello{payload}\n", step=1))
    display.render(ev.ExecutionErrorEvent(content=f"boom{payload}", step=2))
    display.render(ev.NoticeEvent(content=f"notice{payload}"))
    text = out.getvalue()
    assert "hello" in text and "boom" in text and "notice" in text
    assert "\x1b]" not in text and "\x9b" not in text and "\x9d" not in text
    assert "\x1b[2J" not in text and "\x1b[6n" not in text and "\x1bP" not in text


def test_bidi_overrides_and_isolates_are_dropped():
    # "Trojan source": U+202E shows `txt.exe` as `exe.txt`; isolates reorder the same way.
    shown = printable("report\u202etxt.exe and \u2066a\u2069 \u202ab\u202c")
    assert shown == "reporttxt.exe and a b"
    assert printable("עברית and العربية stay") == "עברית and العربية stay"


def test_a_table_cell_is_one_line():
    assert printable_line("a\tb\nc\u2028d\x1b]0;t\x07e") == "a b c de"


def test_plain_text_is_never_markup():
    assert plain_text("[/]").plain == "[/]"
    assert plain_text("weight [kg]", "bold").plain == "weight [kg]"
    assert plain_text("[bold]x[/bold]\x1b[2J").plain == "[bold]x[/bold]"


def test_the_rich_display_shows_answers_prose_names_and_errors_without_escapes():
    out = io.StringIO()
    display = RichDisplay(Console(file=out, force_terminal=True, color_system="truecolor"))
    payload = "".join(ATTACKS)
    display.render(ev.UserEvent(content=f"task{payload}"))
    display.render(ev.TextEvent(content=f"prose{payload} [/]", step=1))
    display.render(ev.CodeEvent(code=f"x = 1  # {payload}", step=1))
    final = ev.FinalResponseEvent(content=f"answer{payload} [/]", source=FINAL_ANSWER)
    display.render(final)
    display.render(ev.ErrorEvent(content=f"failed{payload} [/]"))
    text = out.getvalue()
    for word in ("task", "prose", "answer", "failed", "step 1"):
        assert word in text
    assert "\x1b]" not in text and "\x07" not in text and "\x9b" not in text
    assert "\x9d" not in text and "\x1bP" not in text and "\x1b[2J" not in text
