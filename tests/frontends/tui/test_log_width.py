"""Issue 34 leftovers, item 1: frames a cell prints use the width of the log they are
shown in (not a pinned 80 columns), and a resize applies to the next cells."""

from __future__ import annotations

from cave_tui.frontends.tui.widgets.steplog import FoldedOutput
from tests.frontends.tui.conftest import make_app, settle, submit, wait_for

# 30 columns of about 10 characters: pandas fills whatever width it is given.
WIDE = (
    "```python\nimport pandas as pd\n"
    "wide = pd.DataFrame({f'measure_{i}': [i * 1000 + r for r in range(5)] for i in range(30)})\n"
    "print(wide)\n```"
)


def widest_output_line(app) -> int:
    outputs = list(app.steplog.query(FoldedOutput))
    assert outputs, "no output in the log"
    return max(len(line) for line in outputs[-1].full.splitlines())


async def test_a_wide_frame_prints_at_the_logs_width_and_follows_a_resize() -> None:
    app = make_app([WIDE, "Printed.", WIDE, "Printed again."])
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "print the wide frame")
        await wait_for(pilot, lambda: bool(app.steplog.query(FoldedOutput)))
        log_width = app.steplog.output_width
        assert log_width > 80
        widest = widest_output_line(app)
        assert 80 < widest <= log_width, (widest, log_width)

        await pilot.resize_terminal(80, 40)
        await wait_for(pilot, lambda: app.steplog.output_width < log_width)
        await submit(pilot, "again")
        await wait_for(pilot, lambda: len(app.steplog.query(FoldedOutput)) == 2)
        assert widest_output_line(app) <= app.steplog.output_width < widest
