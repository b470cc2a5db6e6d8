"""A running cell's output streams into the log, and stays there after an interrupt (14.7).

Through the app (Textual pilot), with the in-process runtime and with a real kernel. The
cells print, then wait for a file the test never writes: the test sees the lines in the log
while the cell still runs, then interrupts it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console

from cave_tui.agent import events as ev
from cave_tui.agent.cell_output import OutputThrottle
from cave_tui.agent.display import RichDisplay

from .conftest import chat_text, make_app, settle, wait_for


def printing_cell(tmp_path: Path) -> str:
    """Three lines, then a loop only an interrupt ends."""
    return (
        "import time\n"
        "for i in range(3):\n"
        "    print(f'line {i}', flush=True)\n"
        "while True:\n"
        "    time.sleep(0.01)\n"
    )


def live_output(app, step: int = 0, agent: str | None = "user") -> str:  # type: ignore[no-untyped-def]
    entry = app.steplog.current(step, agent)
    return entry.live_text if entry is not None else ""


async def test_a_cells_output_streams_and_stays_after_ctrl_c(tmp_path):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.prompt.text = "!" + printing_cell(tmp_path)
        app.prompt.action_submit()
        await wait_for(pilot, lambda: "line 2" in live_output(app))
        entry = app.steplog.current(0, "user")
        assert app.busy and entry.outcome == "running"  # shown while the cell runs
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.busy)
        await settle(pilot)
        assert entry.outcome == "interrupted"
        assert "line 0\nline 1\nline 2" in str(entry.live.render())  # the partial output stays
        assert "Interrupted" in chat_text(app)


async def test_an_agent_cells_output_streams_and_stays_after_escape(tmp_path):
    reply = f"```python\n{printing_cell(tmp_path)}```"
    app = make_app([reply])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.prompt.text = "print three lines"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: "line 2" in live_output(app, 1, None))
        app.action_cancel_turn()  # what Esc does
        await wait_for(pilot, lambda: not app.busy)
        await settle(pilot)
        entry = app.steplog.current(1, None)
        assert entry.outcome == "interrupted"
        assert "line 2" in str(entry.live.render())


async def test_finished_output_replaces_the_live_tail(tmp_path):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.prompt.text = "!for i in range(40):\n    print(i)"
        app.prompt.action_submit()
        await settle(pilot)
        entry = app.steplog.current(0, "user")
        assert entry.outcome == "ok" and entry.live is None  # the folded whole output instead
        assert "folded" in "\n".join(str(w.render()) for w in entry.query("FoldedOutput"))


async def test_a_kernel_cells_output_streams_and_stays_after_ctrl_c(tmp_path):
    from cave_tui.runtime.kernel import IPyKernelRuntime

    runtime = IPyKernelRuntime(interrupt_grace=2.0, cell_timeout=60)
    app = make_app(runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.services.ready, timeout=60)
        app.prompt.text = "!" + printing_cell(tmp_path)
        app.prompt.action_submit()
        await wait_for(pilot, lambda: "line 2" in live_output(app), timeout=60)
        entry = app.steplog.current(0, "user")
        assert app.busy and entry.outcome == "running"
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.busy, timeout=30)
        await settle(pilot)
        assert entry.outcome == "interrupted"
        assert "line 2" in str(entry.live.render())
        await app.action_quit()


async def test_a_flood_of_output_is_one_bounded_event_per_interval():
    loop = asyncio.get_running_loop()
    delivered: list[tuple[str, int]] = []
    arrived = asyncio.Event()

    def deliver(text: str, dropped: int) -> None:
        delivered.append((text, dropped))
        arrived.set()

    throttle = OutputThrottle(loop, deliver, interval=0.05, limit=1000)
    lines = [f"{i}\n" for i in range(50_000)]
    for line in lines:  # no loop turn in between: what a fast printing loop does
        throttle.write(line)
    await arrived.wait()
    assert len(delivered) == 1
    text, dropped = delivered[0]
    assert len(text) == 1000 and text.endswith("49999\n")  # the newest output
    assert dropped + len(text) == sum(map(len, lines))
    arrived.clear()
    throttle.write("after\n")
    await arrived.wait()
    assert delivered[1] == ("after\n", 0)
    throttle.close()


def test_plain_display_prints_streamed_output_once():
    console = Console(record=True, width=80)
    display = RichDisplay(console)
    display.render(ev.CodeEvent(content="print('hi')", code="print('hi')", step=1))
    display.render(ev.OutputEvent(content="hi\n", step=1))
    display.render(ev.ExecutionOutputEvent(content="hi", output="hi\n", step=1))
    assert console.export_text().count("hi\n") == 1


async def test_the_session_records_the_whole_output_once_not_its_chunks(tmp_path):
    from cave_tui.app.startup import DataOptions

    from .test_app_data import make_data_app, records

    reply = "```python\nfor i in range(3):\n    print(f'row {i}')\n```"
    app = make_data_app([reply, "Done."], DataOptions(sessions_dir=tmp_path / "sessions"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.services.session is not None)
        recorder = app.services.session
        seen: list[str] = []
        app.services.event_hooks.append(lambda event: seen.append(event.type.value))
        app.prompt.text = "print rows"
        app.prompt.action_submit()
        await settle(pilot)
        await app.action_quit()
    kinds = [r["type"] for r in records(recorder.dir)]
    assert "output" in seen  # streamed to the front end
    assert "output" not in kinds  # not recorded chunk by chunk
    (done,) = [r for r in records(recorder.dir) if r["type"] == "execution_output"]
    assert done["output"] == "row 0\nrow 1\nrow 2\n"
