"""TUI figures: start-up until the app takes keys, streamed answers, inspector refresh, memory.

python bench/tui.py             # prints a table, writes bench/results/tui.json
python bench/tui.py --quick     # fewer repeats
python bench/tui.py --figure    # only the figure drawn in the log
python bench/tui.py --table     # only the table view of a 2M x 60 frame

- start-up: the real `cave --model scripted:FILE` under a pseudo-terminal (pexpect):
  time until the first frame shows the input, and until a key typed then is drawn
  in it ("accepts input"); median of several runs. Idle memory: the process's RSS
  once its runtime is up, with nothing running.
- streaming: the app in headless mode (`App.run_test`) answering a 10,000- and a
  100,000-token Markdown reply from a model that yields one ~4-character chunk at a
  time and gives the event loop a turn between chunks; from Enter to the last
  chunk rendered. The 100k time should be at most 12x the 10k time (linear).
- inspector: 10,000 variables in a real IPython runtime; the runtime's
  `namespace_summary()` (bounded: the prompt's), its `namespace_listing()` (every name:
  what the inspector shows, off the UI thread) and the inspector's refresh (rows replaced
  and the visible rows painted) are timed apart.
- figure: a 1000x800 PNG from a cell to its figure painted in the code log (decoded,
  mounted, laid out, every row rendered as half-blocks), target <= 150 ms.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report

from cave_tui.app.config import Config
from cave_tui.models.base import Completion, Model, TextDelta, Usage
from cave_tui.models.tokens import count_text

ROOT = Path(__file__).resolve().parents[1]
CAVE = Path(sys.executable).with_name("cave")
_TEXT = (
    "the frame holds rows for each species and we group by island then compute the mean "
    "body mass flipper length bill depth correlation sample median quantile variance"
)
WORDS = _TEXT.split(" ")


# -- a long Markdown answer ------------------------------------------------------------------
def markdown_answer(tokens: int, seed: int = 0) -> str:
    """Realistic prose: headings, paragraphs, lists, fenced (non-Python) code, tables."""
    rng = random.Random(seed)

    def sentence(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."

    parts: list[str] = []
    total = 0
    i = 0
    while total < tokens:
        kind = i % 7
        if kind == 0:
            block = f"## Section {i}\n"
        elif kind in (1, 4):
            block = sentence(rng.randint(30, 80)) + " Use `df.groupby()` and **bold** here.\n"
        elif kind == 2:
            block = "\n".join(f"- {sentence(rng.randint(5, 14))}" for _ in range(4)) + "\n"
        elif kind == 3:
            lines = [f"SELECT {rng.choice(WORDS)}, count(*) FROM t{j};" for j in range(6)]
            block = "```sql\n" + "\n".join(lines) + "\n```\n"
        elif kind == 5:
            rows = [f"| {rng.choice(WORDS)} | {rng.randint(0, 999)} |" for _ in range(4)]
            block = "| col | value |\n|---|---|\n" + "\n".join(rows) + "\n"
        else:
            block = "1. " + sentence(12) + "\n2. " + sentence(10) + "\n"
        parts.append(block)
        total += count_text(block)
        i += 1
    return "\n".join(parts)


class TrickleModel(Model):
    """Streams a fixed reply in ~4-character chunks, yielding to the loop between chunks."""

    model_id = "bench:trickle"

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.chunks = 0

    async def stream(self, messages: list[Any], **kwargs: Any) -> AsyncIterator[Any]:
        for i in range(0, len(self.reply), 4):
            self.chunks += 1
            yield TextDelta(self.reply[i : i + 4])
            await asyncio.sleep(0)
        yield Completion("stop", Usage(1, 1, 2, 1))


# -- streaming ---------------------------------------------------------------------------------
async def stream_answer(tokens: int) -> dict[str, float]:
    from cave_tui.app.services import AppServices
    from cave_tui.frontends.tui.app import CaveApp
    from cave_tui.frontends.tui.widgets.chat import AgentMessage

    reply = markdown_answer(tokens)
    model = TrickleModel(reply)
    services = AppServices(Config(), model=model)
    app = CaveApp(services, animate=False, history_file=None, persist_settings=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        events = 0

        def count(event: Any) -> None:
            nonlocal events
            events += event.type.value == "text"

        services.event_hooks.append(count)
        app.prompt.text = "write a long report"
        started = time.perf_counter()
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.chat.flush_all()
        await pilot.pause()
        elapsed = time.perf_counter() - started
        message = app.chat.query(AgentMessage).last()
        assert message.text == reply, "the rendered reply differs from the model's"
        segments = message.markdown.segment_count
        await app.action_quit()
    return {
        "seconds": elapsed,
        "tokens_per_s": tokens / elapsed,
        "chunks_per_s": model.chunks / elapsed,
        "text_events_per_s": events / elapsed,
        "segments": segments,
    }


# -- inspector ------------------------------------------------------------------------------------
async def inspector_refresh(n: int, repeat: int) -> dict[str, float]:
    from cave_tui.app.services import AppServices
    from cave_tui.frontends.tui.app import CaveApp
    from cave_tui.runtime.ipython import IPythonRuntime

    runtime = IPythonRuntime()
    code = (
        "import random\n"
        f"for _i in range({n}):\n"
        "    globals()[f'v{_i}'] = [random.random() for _ in range(_i % 7)] if _i % 3 else _i\n"
    )
    result = await runtime.execute(code)
    assert result.success, result.error
    services = AppServices(Config(), runtime=runtime)
    app = CaveApp(services, animate=False, history_file=None, persist_settings=False)
    summary_times: list[float] = []
    listing_times: list[float] = []
    refresh_times: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = app.inspector.table
        for _ in range(repeat):
            started = time.perf_counter()
            await runtime.namespace_summary()
            summary_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            rows = await runtime.namespace_listing()
            listing_times.append(time.perf_counter() - started)
            assert len(rows) >= n
            changed = {rows[5].name, rows[7].name}
            started = time.perf_counter()
            app.inspector.set_rows(rows, changed)
            for y in range(table.size.height):  # paint what is on screen
                table.render_line(y)
            refresh_times.append(time.perf_counter() - started)
            await pilot.pause()
        await app.action_quit()
    return {
        "summary_ms": statistics.median(summary_times) * 1000,
        "listing_ms": statistics.median(listing_times) * 1000,
        "refresh_ms": statistics.median(refresh_times) * 1000,
    }


async def frame_table(rows: int, columns: int, steps: int) -> dict[str, float]:
    """Open the detail view's table of a rows×columns frame (in process), then scroll it: a
    step is one key (down, or right by a column, or page down: a new window of rows) and the
    repaint of the table's lines."""
    import numpy as np
    import pandas as pd

    from cave_tui.app.services import AppServices
    from cave_tui.frontends.tui.app import CaveApp
    from cave_tui.frontends.tui.screens.detail import DetailScreen
    from cave_tui.runtime.ipython import IPythonRuntime

    runtime = IPythonRuntime()
    data = np.random.default_rng(0).random((rows, columns), dtype=np.float32)
    runtime._ns["big"] = pd.DataFrame(data, columns=[f"c{i}" for i in range(columns)])
    services = AppServices(Config(), runtime=runtime)
    app = CaveApp(services, animate=False, history_file=None, persist_settings=False)
    steps_ms: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        started = time.perf_counter()
        app.open_detail("big")
        while not (isinstance(app.screen, DetailScreen) and app.screen.frame is not None):
            await asyncio.sleep(0.001)
        frame = app.screen.frame
        while not frame.children or not frame.table.size.height:
            await asyncio.sleep(0.001)
        table = frame.table
        while not table.size.height:
            await asyncio.sleep(0.001)
        for y in range(table.size.height):
            table.render_line(y)
        open_ms = (time.perf_counter() - started) * 1000
        await app.workers.wait_for_complete()
        keys = ("down", "right", "pagedown")
        for step in range(steps):
            action = keys[step % len(keys)]
            started = time.perf_counter()
            getattr(
                table, f"action_{'page_down' if action == 'pagedown' else 'cursor_' + action}"
            )()
            for y in range(table.size.height):  # a missing window is asked for here
                table.render_line(y)
            top = int(table.scroll_y)
            shown = range(top, min(top + table.size.height, frame.backend.total))
            if not all(frame.backend.has_row(row) for row in shown):  # and arrives: repaint
                while not all(frame.backend.has_row(row) for row in shown):
                    await asyncio.sleep(0)
                for y in range(table.size.height):
                    table.render_line(y)
            steps_ms.append((time.perf_counter() - started) * 1000)
            await pilot.pause()
        converted = frame.backend.rows_converted
        await app.action_quit()
    return {
        "open_ms": open_ms,
        "step_ms": statistics.median(steps_ms),
        "step_worst_ms": max(steps_ms),
        "rows_converted": converted,
    }


# -- a figure in the code log ---------------------------------------------------------------------
def figure_png(width: int = 1000, height: int = 800) -> bytes:
    """A *width* x *height* PNG of a matplotlib line plot (Agg), as a cell's figure is."""
    import io

    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width / 100, height / 100), dpi=100)
    rng = random.Random(0)
    for k in range(3):
        ax.plot([rng.gauss(k, 1) for _ in range(200)], label=f"series {k}")
    ax.set_title("bench")
    ax.legend()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


async def figure_draw(repeat: int) -> dict[str, float]:
    """From a cell's PNG (1000x800) to its figure painted in the code log (half-blocks: the
    headless app has no terminal protocol): decode, mount, layout, every row rendered."""
    from cave_tui.agent.events import USER_AGENT
    from cave_tui.app.services import AppServices
    from cave_tui.frontends.tui.app import CaveApp
    from cave_tui.frontends.tui.widgets.figure import FigureView

    os.environ["CAVE_IMAGES"] = "halfblocks"
    png = figure_png()
    services = AppServices(Config())
    app = CaveApp(services, animate=False, history_file=None, persist_settings=False)
    times: list[float] = []
    baseline: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        for i in range(repeat):
            entry = app.steplog.add_code(i + 1, USER_AGENT, "plt.show()")
            await pilot.pause()
            started = time.perf_counter()
            entry.add_figures([png], [])
            await pilot.pause()
            view = entry.query(FigureView).last()
            for y in range(view.image.size.height):  # paint every row of it
                view.image.render_line(y)
            times.append(time.perf_counter() - started)
            assert view.image.size.height > 0
            started = time.perf_counter()  # the same for one line of text: the baseline
            entry.add_note("one line")
            await pilot.pause()
            baseline.append(time.perf_counter() - started)
        await app.action_quit()
    return {
        "median_ms": statistics.median(times) * 1000,
        "worst_ms": max(times) * 1000,
        "text_line_ms": statistics.median(baseline) * 1000,
    }


def figure_rows(figure: dict[str, float]) -> list[dict[str, Any]]:
    return [
        {
            "metric": "1000x800 figure drawn in the log (median)",
            "value": figure["median_ms"],
            "unit": "ms",
            "target": "<= 150",
            "ok": figure["median_ms"] <= 150,
        },
        {"metric": "1000x800 figure drawn in the log (worst)", "value": figure["worst_ms"],
         "unit": "ms"},
        {"metric": "one line of text drawn in the log (baseline)",
         "value": figure["text_line_ms"], "unit": "ms"},
    ]  # fmt: skip


# -- start-up and memory (the real command under a pseudo-terminal) ------------------------------
def startup(repeat: int, runtime: list[str]) -> dict[str, float]:
    """The real app under a pty with *runtime*'s flags ([] is the default: the kernel).

    Per run: the first frame, a key typed then drawn (accepts input), the idle memory of the
    app and of the app with its kernel; then, in a second run, a `!` cell typed as soon as
    the input shows, timed until its output is drawn (it waits for the runtime to be up).
    """
    import pexpect
    import psutil

    script = Path(tempfile.mkdtemp()) / "replies.yaml"
    script.write_text('- "Hello."\n')
    home = Path(tempfile.mkdtemp())
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("CAVE_KERNEL", "CAVE_MEMORY_LIMIT")},
        "TERM": "xterm-256color",
        "CAVE_CONFIG_DIR": str(home / "config"),
        "CAVE_DATA_DIR": str(home / "data"),
        "CAVE_LOCAL_MODEL": "off",
    }

    def spawn() -> Any:
        return pexpect.spawn(
            str(CAVE),
            ["--model", f"scripted:{script}", *runtime],
            env=env,
            dimensions=(40, 120),
            encoding="utf-8",
            codec_errors="replace",
            timeout=60,
        )

    paints, inputs, app_memory, memory, cpu, first_cells = [], [], [], [], [], []
    for _ in range(repeat):
        started = time.perf_counter()
        child = spawn()
        child.expect("sk cave")  # the placeholder (its first cell holds the cursor)
        painted = time.perf_counter()
        child.send("zq")
        child.expect("zq")
        typed = time.perf_counter()
        process = psutil.Process(child.pid)
        times = process.cpu_times()
        cpu.append(times.user + times.system)
        paints.append(painted - started)
        inputs.append(typed - started)
        memory.append(_settled_rss(process, child) / 2**20)
        app_memory.append(process.memory_info().rss / 2**20)
        child.sendcontrol("q")
        child.expect(pexpect.EOF)
        child.close()

        started = time.perf_counter()
        child = spawn()
        child.expect("sk cave")
        child.send("!print('ok' * 3)\r")  # queued until the runtime is up
        child.expect("okokok")
        first_cells.append(time.perf_counter() - started)
        child.sendcontrol("q")
        child.expect(pexpect.EOF)
        child.close()
    return {
        "first_paint_s": statistics.median(paints),
        "accepts_input_s": statistics.median(inputs),
        "accepts_input_max_s": max(inputs),
        "first_cell_s": statistics.median(first_cells),
        "idle_rss_mb": statistics.median(memory),
        "idle_app_rss_mb": statistics.median(app_memory),
        "cpu_until_input_s": statistics.median(cpu),
    }


def _settled_rss(process: Any, child: Any) -> int:
    """RSS (with children) once it stopped growing for a second: the runtime is up, idle."""
    last, stable_since = -1, time.perf_counter()
    deadline = time.perf_counter() + 20
    while time.perf_counter() < deadline:
        try:
            child.read_nonblocking(100_000, timeout=0.25)  # keep the pty drained
        except Exception:
            pass
        rss = process.memory_info().rss + sum(
            c.memory_info().rss for c in process.children(recursive=True)
        )
        if abs(rss - last) > 512 * 1024:
            last, stable_since = rss, time.perf_counter()
        elif time.perf_counter() - stable_since > 1.0:
            return rss
    return last


def table_rows(table: dict[str, float]) -> list[dict[str, Any]]:
    """The table view's rows of the report."""
    return [
        {
            "metric": "table view of a 2M x 60 frame: open",
            "value": table["open_ms"],
            "unit": "ms",
            "target": "<= 300",
            "ok": table["open_ms"] <= 300,
        },
        {
            "metric": "table view of a 2M x 60 frame: scroll step (median)",
            "value": table["step_ms"],
            "unit": "ms",
            "target": "<= 16",
            "ok": table["step_ms"] <= 16,
        },
        {"metric": "table view: scroll step (worst, a new window of rows)",
         "value": table["step_worst_ms"], "unit": "ms"},
    ]  # fmt: skip


def main() -> None:
    quick = "--quick" in sys.argv
    os.environ.setdefault("CAVE_CONFIG_DIR", tempfile.mkdtemp())
    os.environ.setdefault("CAVE_DATA_DIR", tempfile.mkdtemp())
    repeat = 3 if quick else 7
    if "--figure" in sys.argv:  # only the figure
        figure = asyncio.run(figure_draw(repeat))
        report("tui-figure", figure_rows(figure), {"figure": figure, "load": os.getloadavg()})
        return
    if "--table" in sys.argv:  # only the table view (median of `repeat` runs)
        runs = [asyncio.run(frame_table(2_000_000, 60, 30 if quick else 90)) for _ in range(repeat)]
        table = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        load = os.getloadavg()
        print(f"load average during the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        report("tui-table", table_rows(table), {"table": table, "runs": runs, "load": load})
        return
    kernel = startup(repeat, [])
    in_process = startup(repeat, ["--in-process"])
    ten = asyncio.run(stream_answer(10_000))
    hundred = asyncio.run(stream_answer(100_000))
    inspector = asyncio.run(inspector_refresh(10_000, repeat))
    table = asyncio.run(frame_table(2_000_000, 60, 30 if quick else 90))
    figure = asyncio.run(figure_draw(repeat))
    ratio = hundred["seconds"] / ten["seconds"]
    rows = []
    for label, start in (("kernel (default)", kernel), ("--in-process", in_process)):
        rows += [
            {"metric": f"{label}: first frame (median)", "value": start["first_paint_s"],
             "unit": "s"},
            {
                "metric": f"{label}: app accepts input (median)",
                "value": start["accepts_input_s"],
                "unit": "s",
                "target": "<= 1.0",
                "ok": start["accepts_input_s"] <= 1.0,
            },
            {"metric": f"{label}: app accepts input (worst)",
             "value": start["accepts_input_max_s"], "unit": "s"},
            {"metric": f"{label}: first cell typed at once, output drawn",
             "value": start["first_cell_s"], "unit": "s"},
            {"metric": f"{label}: CPU time until input accepted",
             "value": start["cpu_until_input_s"], "unit": "s"},
            {
                "metric": f"{label}: idle memory of the app (RSS)",
                "value": start["idle_app_rss_mb"],
                "unit": "MB",
                "target": "<= 300",
                "ok": start["idle_app_rss_mb"] <= 300,
            },
            {"metric": f"{label}: idle memory with the kernel (RSS)",
             "value": start["idle_rss_mb"], "unit": "MB"},
        ]  # fmt: skip
    rows += [
        {"metric": "10k-token answer: total", "value": ten["seconds"], "unit": "s"},
        {"metric": "10k-token answer: tokens/s", "value": ten["tokens_per_s"], "unit": "/s"},
        {"metric": "10k-token answer: chunks/s", "value": ten["chunks_per_s"], "unit": "/s"},
        {"metric": "100k-token answer: total", "value": hundred["seconds"], "unit": "s"},
        {
            "metric": "100k-token answer: tokens/s",
            "value": hundred["tokens_per_s"],
            "unit": "/s",
        },
        {
            "metric": "100k / 10k time",
            "value": ratio,
            "unit": "x",
            "target": "<= 12",
            "ok": ratio <= 12,
        },
        {
            "metric": "namespace_summary, 10k vars",
            "value": inspector["summary_ms"],
            "unit": "ms",
        },
        {
            "metric": "namespace_listing, 10k vars",
            "value": inspector["listing_ms"],
            "unit": "ms",
        },
        {
            "metric": "inspector refresh, 10k vars",
            "value": inspector["refresh_ms"],
            "unit": "ms",
            "target": "<= 50",
            "ok": inspector["refresh_ms"] <= 50,
        },
    ]
    rows += table_rows(table)
    rows += figure_rows(figure)
    load = os.getloadavg()
    print(f"load average during the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    extra = {"startup": {"kernel": kernel, "in_process": in_process}, "table": table}
    extra["figure"] = figure
    report("tui", rows, {"streaming": {"10k": ten, "100k": hundred}, "load": load, **extra})


if __name__ == "__main__":
    main()
