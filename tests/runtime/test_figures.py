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
