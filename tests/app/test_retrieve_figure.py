"""Issue 34, item 1: `/retrieve fig out.png|svg|pdf` writes a matplotlib Figure variable as
that file, in process and with the kernel (no trust_kernel): the figure is drawn where it
lives and only the file's bytes come back, checked (PNG signature, `%PDF`, an SVG root)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cave_tui import CaveAgent
from cave_tui.app.commands import load_commands
from cave_tui.models import ScriptedModel
from cave_tui.runtime.figures import PNG_MAGIC, FigureError, FigureFormat, check_rendered
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.kernel import IPyKernelRuntime
from tests.helpers.front_end import RecordingContext

CELL = (
    "import matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots()\nax.hist([1, 2, 2, 3, 3, 3])\nax.set_title('hist')\n"
    "plt.show()\nnot_a_figure = [1, 2]"
)


@pytest.mark.parametrize("kind", ["in-process", "kernel"])
async def test_retrieve_writes_a_figure_as_png_svg_and_pdf(kind, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runtime = IPythonRuntime() if kind == "in-process" else IPyKernelRuntime(cell_timeout=60)
    await runtime.start()
    try:
        assert (await runtime.execute(CELL)).success
        # No window, no block: Agg in process, the inline backend in the kernel.
        backend = await runtime.execute("import matplotlib; print(matplotlib.get_backend())")
        assert ("inline" if kind == "kernel" else "agg") in backend.output.lower()
        ctx = RecordingContext(CaveAgent(ScriptedModel([]), runtime))
        registry = load_commands()

        assert await registry.dispatch("/retrieve fig out.png", ctx), ctx.last
        assert "Saved `fig` (a Figure drawn as PNG) to out.png" in ctx.last, ctx.last
        assert (tmp_path / "out.png").read_bytes().startswith(PNG_MAGIC)
        assert await registry.dispatch("/retrieve fig out.svg", ctx), ctx.last
        assert re.search(rb"<svg[\s>]", (tmp_path / "out.svg").read_bytes()[:2000])
        assert await registry.dispatch("/retrieve fig out.pdf", ctx), ctx.last
        assert (tmp_path / "out.pdf").read_bytes().startswith(b"%PDF-")

        assert not await registry.dispatch("/retrieve not_a_figure x.png", ctx)
        assert "it is a list, not a matplotlib Figure" in ctx.last, ctx.last
        assert not (tmp_path / "x.png").exists()
        assert not await registry.dispatch("/retrieve missing x.png", ctx)
        assert not (tmp_path / "x.png").exists()
    finally:
        await runtime.stop()


def test_what_comes_back_is_checked_for_its_format() -> None:
    assert check_rendered(PNG_MAGIC + b"x", FigureFormat.PNG)
    assert check_rendered(b'<?xml version="1.0"?>\n<!DOCTYPE svg x>\n<svg x="1">', FigureFormat.SVG)
    for data, fmt in [
        (b"%PDF-1.4", FigureFormat.PNG),
        (b"<html><svg>", FigureFormat.SVG),
        (PNG_MAGIC, FigureFormat.PDF),
    ]:
        with pytest.raises(FigureError):
            check_rendered(data, fmt)
    assert FigureFormat.of_path("a/b.SVG") is FigureFormat.SVG
    assert FigureFormat.of_path("b.parquet") is None
    assert FigureFormat.of_path(str(Path("noext"))) is None
