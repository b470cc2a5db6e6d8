"""Issue 34, item 1: a figure a cell draws is in the code log under its cell (the agent's
and the user's `!` cell), drawn by textual-image (half-blocks when the terminal has no
image protocol, as under the pilot), bounded to the log's width and `MAX_ROWS`; a resumed
session's cell shows its saved figure again."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from cave_tui.agent import events as ev
from cave_tui.frontends.tui.widgets.figure import MAX_ROWS, FigureView, cells_for
from tests.frontends.tui.conftest import make_app, settle, submit, wait_for

PLOT = (
    "```python\nimport matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots(figsize=(10, 8))\nax.plot([1, 3, 2])\nax.set_title('Trend')\n"
    "plt.show()\n```"
)


def figures_of(app, agent: str | None = None) -> list[FigureView]:
    return [v for entry in app.steplog.entries.values() for v in entry.query(FigureView)]


async def test_a_cells_figure_is_drawn_under_it() -> None:
    from textual_image.widget import HalfcellImage

    app = make_app([PLOT, "A line going up then down."])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "plot it")
        await wait_for(pilot, lambda: len(figures_of(app)) == 1)
        (view,) = figures_of(app)
        assert isinstance(view.image, HalfcellImage)  # no image protocol under the pilot
        assert view.pixels == (1000, 800)
        await wait_for(pilot, lambda: view.image.size.height > 0)
        assert view.image.size.height <= MAX_ROWS
        assert view.image.size.width <= app.steplog.size.width
        assert "figure 1" in str(view.caption.render())
        # A `!` cell's figure too.
        await submit(pilot, "!plt.bar(['a', 'b'], [1, 2])")
        await wait_for(pilot, lambda: len(figures_of(app)) == 2)


async def test_a_failed_cells_figure_is_drawn_under_it() -> None:
    """A cell that draws and then raises shows what it drew, under its error (the agent's
    and a `!` cell)."""
    failing = PLOT.replace("plt.show()", "1 / 0")
    app = make_app([failing, "It failed."])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "plot it")
        await wait_for(pilot, lambda: len(figures_of(app)) == 1)
        (entry,) = [e for e in app.steplog.entries.values() if e.query(FigureView)]
        assert entry.outcome == "ZeroDivisionError"
        await submit(pilot, "!plt.bar(['a', 'b'], [1, 2]); undefined_name")
        await wait_for(pilot, lambda: len(figures_of(app)) == 2)


async def test_a_resumed_cells_figure_is_read_from_its_file(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (640, 480), "red").save(buffer, format="png")
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "1-1-1.png").write_bytes(buffer.getvalue())
    (tmp_path / "figures" / "1-2-1.png").write_bytes(b"not a png")
    saved = [str(tmp_path / "figures" / "1-1-1.png")]
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.draw_transcript(
            [
                ev.UserEvent(content="plot it"),
                ev.CodeEvent(code="plt.plot([1])", step=1),
                ev.ExecutionOutputEvent(step=1, saved_figures=saved),
                ev.CodeEvent(code="plt.plot([2])", step=2),
                ev.ExecutionOutputEvent(
                    step=2, saved_figures=[str(tmp_path / "figures/1-2-1.png")]
                ),
            ]
        )
        await wait_for(pilot, lambda: len(figures_of(app)) == 1)  # the broken file: none
        (view,) = figures_of(app)
        assert view.pixels == (640, 480)


def test_a_figure_keeps_its_aspect_within_the_bounds() -> None:
    assert cells_for((1000, 800), (10, 20), columns=200) == (50, 20)
    assert cells_for((1000, 800), (10, 20), columns=25) == (25, 10)


def test_textual_image_never_asks_the_terminal(tmp_path: Path) -> None:
    """textual-image asks the terminal on import when stdout is a tty; the answer would be
    read from the keys (eating what is typed as the app starts), and a pty of 0 columns made
    it divide by zero. cave imports it with the questions off: nothing is written to the
    terminal, and the cell size comes from the window size (the default when it has none)."""
    import os
    import pty
    import subprocess
    import sys

    main, side = pty.openpty()  # a new pty: 0 rows, 0 columns
    code = (
        "import sys\nfrom cave_tui.frontends.tui.widgets.figure import ImageMode, _images, "
        "image_class\nname = image_class(ImageMode.AUTO).__name__\n"
        "sys.stderr.write(f'{name} {tuple(_images().get_cell_size())}')"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], stdin=side, stdout=side, stderr=subprocess.PIPE,
            timeout=60, cwd=tmp_path, env={**os.environ, "TERM": "xterm-256color"},
        )  # fmt: skip
        os.set_blocking(main, False)
        try:
            written = os.read(main, 65536)
        except (BlockingIOError, OSError):
            written = b""
    finally:
        os.close(main)
        os.close(side)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr.decode() == "HalfcellImage (10, 20)"
    assert b"\x1b" not in written, written


def test_the_protocol_is_told_by_the_terminals_environment() -> None:
    from cave_tui.frontends.tui.widgets.figure import ImageMode, terminal_mode

    assert terminal_mode({"TERM": "xterm-kitty"}) is ImageMode.KITTY
    assert terminal_mode({"TERM": "foot"}) is ImageMode.SIXEL
    assert terminal_mode({"TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"}) is ImageMode.SIXEL
    assert terminal_mode({"TERM": "xterm-256color"}) is ImageMode.HALF_BLOCKS
    assert terminal_mode({"TERM": "xterm-kitty", "TMUX": "/tmp/x"}) is ImageMode.HALF_BLOCKS
