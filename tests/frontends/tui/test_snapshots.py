"""Screens as SVG snapshots (pytest-textual-snapshot) at 120x40 (wide) and 80x24 (narrow).

Regenerate after an intended change: pytest tests/tui/test_snapshots.py --snapshot-update
Rendering is made stable: no cursor blink, no spinner, a fixed clock, no cell durations.
"""

from __future__ import annotations

import pytest

from cave_tui.frontends.tui.screens.approve import ApprovalScreen
from cave_tui.frontends.tui.screens.detail import DetailScreen
from cave_tui.runtime import IPythonRuntime, MemoryUse

from .conftest import TWO_STEP_FRAME, make_app, settle, submit, wait_for


class SteadyRuntime(IPythonRuntime):
    """The in-process runtime with a fixed limit and memory figure: the same screen on every
    machine and every run."""

    def __init__(self) -> None:
        super().__init__(memory_limit="8G")

    def memory_use(self) -> MemoryUse:
        return MemoryUse(256 << 20, self.memory_limit)


def app(replies: list[str]):
    return make_app(replies, runtime=SteadyRuntime())


async def scrolled_home(pilot) -> None:
    """Wait until the chat and the code log have scrolled to their last line (they follow
    new content a refresh later): the screen is then the same on every run."""
    app = pilot.app
    await settle(pilot)
    panes = (app.chat, app.steplog)
    await wait_for(
        pilot, lambda: all(p.max_scroll_y <= 0 or p.scroll_y >= p.max_scroll_y for p in panes)
    )


SIZES = [pytest.param((120, 40), id="wide"), pytest.param((80, 24), id="narrow")]


@pytest.mark.parametrize("size", SIZES)
def test_empty_start(snap_compare, size):
    async def ready(pilot):
        await settle(pilot)

    assert snap_compare(app(TWO_STEP_FRAME), terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES)
def test_two_step_turn_with_frame(snap_compare, size):
    async def turn(pilot):
        await settle(pilot)
        await submit(pilot, "Which species is heaviest? Keep the table as df.")
        await scrolled_home(pilot)

    assert snap_compare(app(TWO_STEP_FRAME), terminal_size=size, run_before=turn)


@pytest.mark.parametrize("size", SIZES)
def test_detail_view(snap_compare, size):
    async def detail(pilot):
        await settle(pilot)
        await submit(pilot, "Which species is heaviest? Keep the table as df.")
        await scrolled_home(pilot)
        pilot.app.open_detail("df")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, DetailScreen))
        await scrolled_home(pilot)

    assert snap_compare(app(TWO_STEP_FRAME), terminal_size=size, run_before=detail)


@pytest.mark.parametrize("size", SIZES)
def test_approval_prompt(snap_compare, size):
    async def approval(pilot):
        await settle(pilot)
        await submit(pilot, "/approve ask")
        pilot.app.prompt.text = "Which species is heaviest?"
        pilot.app.prompt.action_submit()
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
        await pilot.pause()

    assert snap_compare(app(TWO_STEP_FRAME), terminal_size=size, run_before=approval)


@pytest.mark.parametrize("size", SIZES)
def test_error(snap_compare, size):
    replies = ["Let me divide.\n\n```python\nratio = 1 / 0\n```"]  # then the script runs out

    async def error(pilot):
        await settle(pilot)
        await submit(pilot, "Divide one by zero.")
        await scrolled_home(pilot)

    assert snap_compare(app(replies), terminal_size=size, run_before=error)


FIGURE = [
    "```python\nimport matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots(figsize=(6, 4))\nax.plot([1, 3, 2], color='tab:orange')\n"
    "ax.set_title('Trend')\nplt.show()\n```",
    "A line going up, then down.",
]


@pytest.mark.parametrize("size", SIZES)
def test_figure_in_the_log_as_half_blocks(snap_compare, size, monkeypatch):
    monkeypatch.setenv("CAVE_IMAGES", "halfblocks")

    async def turn(pilot):
        await settle(pilot)
        await submit(pilot, "Plot the trend.")
        await scrolled_home(pilot)

    assert snap_compare(app(FIGURE), terminal_size=size, run_before=turn)


def test_figure_in_the_log_with_the_kitty_protocol(snap_compare, monkeypatch):
    """The image is sent to the terminal; the log holds Kitty's placeholder cells, which
    name the image by its id (fixed here: textual-image starts from a random one)."""
    import itertools

    from textual_image.renderable import tgp

    monkeypatch.setenv("CAVE_IMAGES", "kitty")
    monkeypatch.setattr(tgp.Image, "_image_id_counter", itertools.count(0x10203))

    async def turn(pilot):
        await settle(pilot)
        await submit(pilot, "Plot the trend.")
        await scrolled_home(pilot)

    assert snap_compare(app(FIGURE), terminal_size=(120, 40), run_before=turn)
