"""`Figures`: the PNGs a cell displayed are checked (PNG signature, base64) and bounded
(count and size): a kernel's displays are untrusted bytes."""

from __future__ import annotations

import base64

from cave_tui.runtime.figures import MAX_FIGURE_BYTES, MAX_FIGURES, PNG_MAGIC, Figures

PNG = PNG_MAGIC + b"rest of a png"


def test_only_pngs_within_bounds_are_kept() -> None:
    figures = Figures()
    assert figures.add_base64(base64.b64encode(PNG).decode() + "\n")  # as jupyter sends it
    assert not figures.add(b"GIF89a not a png")
    assert not figures.add_base64("not base64 at all!")
    assert not figures.add_base64(12)
    assert not figures.add(PNG_MAGIC + bytes(MAX_FIGURE_BYTES))
    assert not figures.add_base64("A" * (2 * MAX_FIGURE_BYTES))  # refused before decoding
    for _ in range(MAX_FIGURES + 2):
        figures.add(PNG)
    assert figures.kept == [PNG] * MAX_FIGURES
    assert figures.dropped == 5 + 3


PLOT = (
    "import matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots(figsize=(5, 4))\n"
    "ax.plot([1, 2, 3], label='a'); ax.plot([3, 2, 1], label='b')\n"
    "ax.set_title('Sales by month'); ax.set_xlabel('month'); ax.set_ylabel('revenue')\n"
    "plt.show()"
)


async def test_the_model_is_told_what_a_figure_shows_not_its_pixels() -> None:
    from cave_tui.agent.observation import shape_result
    from cave_tui.runtime.ipython import IPythonRuntime

    runtime = IPythonRuntime()
    try:
        result = await runtime.execute(PLOT)
    finally:
        await runtime.stop()
    assert result.success, result.error_text
    assert len(result.figures) == 1
    observation = shape_result(result, 5000)
    (line,) = [x for x in observation.splitlines() if x.startswith("[figure")]
    assert "PNG, 500×400" in line
    assert "'Sales by month'" in line and "x 'month'" in line and "y 'revenue'" in line
    assert "2 series" in line
    assert "iVBOR" not in observation and len(observation) < 400


def test_a_kernel_figure_is_told_by_its_size() -> None:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (321, 123)).save(buffer, format="png")
    figures = Figures()
    assert figures.add_base64(base64.b64encode(buffer.getvalue()).decode())
    assert figures.notes == ["a figure (PNG, 321×123)"]


def test_a_kernels_description_of_a_figure_is_one_line_of_data() -> None:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (10, 20)).save(buffer, format="png")
    figures = Figures()
    detail = "axes (title 'a\x1b]52;c;ZXZpbA==\x07\nb\u202e', 1 series)" + "x" * 2000
    assert figures.add_base64(base64.b64encode(buffer.getvalue()).decode(), detail)
    (note,) = figures.notes
    assert note.startswith("a figure (PNG, 10×20): axes (title 'a]52;c;ZXZpbA== b', 1 series)")
    assert "\x1b" not in note and "\n" not in note and "\u202e" not in note
    assert len(note) < 700


def test_a_failed_cells_figures_are_told_too() -> None:
    """A failed cell's figures are shown under its error, so the model is told of them."""
    from cave_tui.agent.observation import shape_result
    from cave_tui.runtime.base import ExecutionResult

    done = ExecutionResult(success=True, figures=[PNG], figure_notes=["a figure (PNG, 1×1)"])
    assert "[figure shown to the user: a figure (PNG, 1×1)]" in shape_result(done, 5000)
    failed = ExecutionResult(
        success=False, error_text="ValueError: x", figures=[PNG], figure_notes=["a figure"]
    )
    assert "[figure shown to the user: a figure]" in shape_result(failed, 5000)
