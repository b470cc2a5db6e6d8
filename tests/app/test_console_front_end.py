"""ConsoleFrontEnd (`--plain`, `cave run`): events rendered one at a time, outside a turn's
stream, are printed whole, prose included."""

from __future__ import annotations

import io

from rich.console import Console

from cave_tui.agent.events import CodeEvent, TextEvent
from cave_tui.app.console_front_end import ConsoleFrontEnd


def test_prose_rendered_on_its_own_is_printed_in_order():
    out = io.StringIO()
    front = ConsoleFrontEnd(None, Console(file=out, width=100, color_system=None))  # type: ignore[arg-type]
    front.render(TextEvent(content="First the plan.", step=1))
    front.render(CodeEvent(content="x = 1", code="x = 1", step=1))
    front.render(TextEvent(content="Then the answer.", step=2))
    text = out.getvalue()
    assert "First the plan." in text and "Then the answer." in text
    assert text.index("First the plan.") < text.index("x = 1") < text.index("Then the answer.")
