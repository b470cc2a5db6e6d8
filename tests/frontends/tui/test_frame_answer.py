"""A frame given to final_answer() shows in the app's chat as its rows, one per line, not
joined into one paragraph of prose (issue 31, item 9)."""

from __future__ import annotations

import pandas as pd
from rich.console import Console

from .conftest import make_app, settle, submit

CELL = (
    "```python\nimport pandas as pd\n"
    "top = pd.DataFrame({'carrier': ['F9', 'EV', 'YV'], 'dep_delay': [20.21, 19.95, 18.99]})\n"
    "final_answer(top)\n```"
)


def _shown(widget: object) -> list[str]:
    console = Console(width=56, record=True, color_system=None)
    console.print(widget.content)  # type: ignore[attr-defined]
    return [line.rstrip() for line in console.export_text().splitlines() if line.strip()]


async def test_a_frame_answer_keeps_its_rows_in_the_chat():
    from cave_tui.frontends.tui.widgets.chat import Answer

    expected = repr(
        pd.DataFrame({"carrier": ["F9", "EV", "YV"], "dep_delay": [20.21, 19.95, 18.99]})
    ).splitlines()
    app = make_app([CELL])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "top carriers by delay")
        answers = [child for child in app.chat.children if isinstance(child, Answer)]
        assert len(answers) == 1
        assert _shown(answers[0]) == [line.rstrip() for line in expected]


async def test_a_prose_answer_is_still_markdown():
    from cave_tui.frontends.tui.widgets.chat import Answer

    answer = Answer("The **worst** carrier is F9.")
    assert _shown(answer) == ["The worst carrier is F9."]
