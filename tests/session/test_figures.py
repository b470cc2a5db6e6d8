"""Issue 34, item 1: a figure a cell draws is saved as PNG in the session folder, named by
the cell's recorded event; `cave run` prints its saved path; the model reads one line on it
(never its pixels); resume finds it again; the notebook export holds it as `image/png`. No
figure opens a window: the in-process runtime draws with Agg whatever MPLBACKEND says."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from cave_tui.agent import events as ev
from cave_tui.runtime.figures import PNG_MAGIC
from cave_tui.session import read_session, to_notebook
from cave_tui.session.figures import read_figure
from cave_tui.session.transcript import transcript
from tests.reliability.real_cave import cave, code, script

PLOT = (
    "import matplotlib\n"
    "import matplotlib.pyplot as plt\n"
    "print('backend', matplotlib.get_backend())\n"
    "plt.plot([1, 2, 3], [3, 1, 2])\n"
    "plt.title('Trend')\n"
    "plt.show()"
)


@pytest.mark.parametrize("runtime", ["--in-process", "--kernel"])
def test_cave_run_saves_prints_records_and_exports_a_figure(tmp_path: Path, runtime: str) -> None:
    model = script(tmp_path / "replies.yaml", [code(PLOT), "A line plot of the trend."])
    # A GUI backend asked for by the environment is not used: no window, no block.
    done = cave(
        "run", "plot it", runtime, "--model", model, cwd=tmp_path,
        extra_env={"MPLBACKEND": "TkAgg"},
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout, done.stderr)
    backend = "agg" if runtime == "--in-process" else "inline"
    (line,) = [x for x in done.stdout.lower().splitlines() if x.strip().startswith("backend ")]
    assert backend in line, line
    (folder,) = (tmp_path / "sessions").iterdir()
    saved = f"figure saved: sessions/{folder.name}/figures/1-1-1.png"
    assert saved in done.stdout, done.stdout
    png = (folder / "figures" / "1-1-1.png").read_bytes()
    assert png.startswith(PNG_MAGIC)

    records = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    (outcome,) = [r for r in records if r["type"] == "execution_output"]
    assert outcome["figure_files"] == ["figures/1-1-1.png"]
    assert "figures" not in outcome  # the bytes are in the file, not the log
    told = [r["content"] for r in records if r["type"] == "message" and r["role"] == "user"]
    # Its size and what it shows (in the kernel, sent beside its PNG by the kernel's agent).
    assert any(
        re.search(
            r"\[figure shown to the user: a figure \(PNG, \d+×\d+\): axes \(title "
            r"'Trend', 1 series\)\]",
            m,
        )
        for m in told
    ), told
    assert not any("iVBOR" in m for m in told)

    # Resume draws it again from the file.
    shown = [e for e in transcript(records, folder) if isinstance(e, ev.ExecutionOutputEvent)]
    (path,) = shown[0].saved_figures
    assert read_figure(Path(path)) == png

    # The notebook export holds it as an image/png output.
    notebook = to_notebook(read_session(folder))
    images = [
        output["data"]["image/png"]
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.output_type == "display_data"
    ]
    assert [base64.b64decode(i) for i in images] == [png]


def test_a_recorded_figure_name_outside_figures_is_never_read(tmp_path: Path) -> None:
    (tmp_path / "secret.png").write_bytes(PNG_MAGIC + b"x")
    event = ev.ExecutionOutputEvent(figure_files=["../secret.png", "figures/../secret.png"])
    (shown,) = transcript([event.to_dict()], tmp_path / "session")
    assert isinstance(shown, ev.ExecutionOutputEvent) and shown.saved_figures == []


async def test_a_users_cell_figure_is_saved_and_named_on_its_record(tmp_path: Path) -> None:
    from cave_tui.session import SessionRecorder

    recorder = SessionRecorder.create(tmp_path / "sessions")
    png = PNG_MAGIC + b"a user's figure"
    recorder.record_user_cell(ev.CodeEvent(code="plt.plot([1])", agent=ev.USER_AGENT))
    outcome = ev.ExecutionOutputEvent(agent=ev.USER_AGENT, figures=[png, png])
    recorder.record_user_cell(outcome)
    await recorder.close()
    assert outcome.figure_files == ["figures/u1-1.png", "figures/u1-2.png"]
    assert (recorder.dir / "figures" / "u1-2.png").read_bytes() == png
    records = read_session(recorder.dir).records
    (saved,) = [r for r in records if r["type"] == "execution_output"]
    assert saved["figure_files"] == outcome.figure_files


FAILING_PLOT = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.title('Before')\n1 / 0"


@pytest.mark.parametrize("runtime", ["--in-process", "--kernel"])
def test_a_failed_cells_figure_is_saved_printed_and_told(tmp_path: Path, runtime: str) -> None:
    """A cell that draws a figure and then raises keeps it: saved, printed, told, exported."""
    model = script(tmp_path / "replies.yaml", [code(FAILING_PLOT), "It failed."])
    done = cave("run", "plot it", runtime, "--model", model, cwd=tmp_path)
    assert "ZeroDivisionError" in done.stdout, (done.stdout, done.stderr)
    (folder,) = (tmp_path / "sessions").iterdir()
    assert f"figure saved: sessions/{folder.name}/figures/1-1-1.png" in done.stdout, done.stdout
    png = (folder / "figures" / "1-1-1.png").read_bytes()
    assert png.startswith(PNG_MAGIC)
    records = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    (outcome,) = [r for r in records if r["type"] == "execution_error"]
    assert outcome["figure_files"] == ["figures/1-1-1.png"]
    told = [r["content"] for r in records if r["type"] == "message" and r["role"] == "user"]
    assert any("[figure shown to the user: a figure (PNG" in m for m in told), told
    shown = [e for e in transcript(records, folder) if isinstance(e, ev.ExecutionErrorEvent)]
    assert [read_figure(Path(p)) for p in shown[0].saved_figures] == [png]
    notebook = to_notebook(read_session(folder))
    kinds = [o.output_type for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert "display_data" in kinds and "error" in kinds, kinds
