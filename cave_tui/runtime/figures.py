"""The figures a cell displayed, as PNG bytes: checked and bounded (a kernel's are untrusted).

`Figures` keeps at most `MAX_FIGURES` PNGs of at most `MAX_FIGURE_BYTES` each, each one
starting with the PNG signature; what it does not keep it counts. `open_figures` renders and
closes the matplotlib figures a cell left open (the in-process runtime's end of a cell, as
the kernel's inline backend does).
"""

from __future__ import annotations

import base64
import binascii
import io
import sys
from dataclasses import dataclass, field

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MAX_FIGURES = 8  # per cell
MAX_FIGURE_BYTES = 2_000_000  # per PNG
_MAX_BASE64_CHARS = MAX_FIGURE_BYTES * 4 // 3 + 1_024  # room for padding and line breaks


@dataclass
class Figures:
    """A cell's PNGs, kept in order, bounded; `dropped` counts those refused."""

    kept: list[bytes] = field(default_factory=list)
    dropped: int = 0

    def add(self, png: bytes) -> bool:
        """Keep *png* if it is a PNG within the bounds; else count it dropped."""
        ok = (
            len(self.kept) < MAX_FIGURES
            and len(png) <= MAX_FIGURE_BYTES
            and png.startswith(PNG_MAGIC)
        )
        if ok:
            self.kept.append(png)
        else:
            self.dropped += 1
        return ok

    def add_base64(self, text: object) -> bool:
        """Keep the PNG whose base64 text is *text* (a display's `image/png`)."""
        if not isinstance(text, str) or len(text) > _MAX_BASE64_CHARS:
            self.dropped += 1
            return False
        try:
            png = base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError):
            self.dropped += 1
            return False
        return self.add(png)


def open_figures(figures: Figures) -> None:
    """Render every open matplotlib figure into *figures*, then close them all (nothing
    happens unless the cells imported pyplot)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    for number in pyplot.get_fignums():
        buffer = io.BytesIO()
        try:
            pyplot.figure(number).savefig(buffer, format="png")
        except Exception:  # a figure that cannot be drawn is not shown
            figures.dropped += 1
            continue
        figures.add(buffer.getvalue())
    pyplot.close("all")
