"""The figures a cell displayed, as PNG bytes: checked and bounded (a kernel's are untrusted).

`Figures` keeps at most `MAX_FIGURES` PNGs of at most `MAX_FIGURE_BYTES` each, each one
starting with the PNG signature, with a one-line note for the model (what the figure shows,
never its pixels); what it does not keep it counts. `open_figures` renders and closes the
matplotlib figures a cell left open (the in-process runtime's end of a cell, as the kernel's
inline backend does); `force_agg` makes sure no figure of the in-process runtime opens a window.
"""

from __future__ import annotations

import base64
import binascii
import enum
import io
import os
import re
import struct
import sys
from dataclasses import dataclass, field

from cave_tui.runtime.shipped.figure_render import describe

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MAX_FIGURES = 8  # per cell
MAX_FIGURE_BYTES = 2_000_000  # per PNG
_MAX_BASE64_CHARS = MAX_FIGURE_BYTES * 4 // 3 + 1_024  # room for padding and line breaks


@dataclass
class Figures:
    """A cell's PNGs, kept in order, bounded; `dropped` counts those refused."""

    kept: list[bytes] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # one per kept PNG: what it shows
    dropped: int = 0

    def add(self, png: bytes, note: str = "") -> bool:
        """Keep *png* (with *note*, else its size) if it is a PNG within the bounds; else
        count it dropped."""
        ok = (
            len(self.kept) < MAX_FIGURES
            and len(png) <= MAX_FIGURE_BYTES
            and png.startswith(PNG_MAGIC)
        )
        if ok:
            self.kept.append(png)
            self.notes.append(note or png_note(png))
        else:
            self.dropped += 1
        return ok

    def add_base64(self, text: object, detail: object = None) -> bool:
        """Keep the PNG whose base64 text is *text* (a display's `image/png`), told with
        *detail* (the kernel's description of it, `figure_render.NOTE_MIME`)."""
        if not isinstance(text, str) or len(text) > _MAX_BASE64_CHARS:
            self.dropped += 1
            return False
        try:
            png = base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError):
            self.dropped += 1
            return False
        return self.add(png, with_detail(png_note(png), detail))


def png_size(png: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's header, None when it has none."""
    if len(png) < 24 or not png.startswith(PNG_MAGIC) or png[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


def png_note(png: bytes) -> str:
    """What can be said of a figure from its PNG alone (a kernel's): its size."""
    size = png_size(png)
    return f"a figure (PNG, {size[0]}×{size[1]})" if size else "a figure (PNG)"


def describe_figure(figure: object, png: bytes) -> str:
    """One line on a matplotlib Figure for the model: its PNG's size, then what it shows
    (`figure_render.describe`: titles, axes labels, series)."""
    return with_detail(png_note(png), describe(figure))


_DETAIL_CHARS = 600


def with_detail(note: str, detail: object) -> str:
    """*note*, then *detail* (a kernel's description of the figure: data, made one short
    line without control characters or escapes) when there is one."""
    if not isinstance(detail, str) or not detail.strip():
        return note
    line = "".join(c for c in " ".join(detail.split()) if c.isprintable())  # no escapes
    if len(line) > _DETAIL_CHARS:
        line = line[: _DETAIL_CHARS - 1] + "…"
    return f"{note}: {line}"


def force_agg() -> None:
    """No figure opens a window or blocks: matplotlib draws with Agg in this process (set
    before a cell imports pyplot; switched to if matplotlib is already loaded)."""
    os.environ["MPLBACKEND"] = "agg"
    matplotlib = sys.modules.get("matplotlib")
    if matplotlib is None:
        return
    current = dict.get(matplotlib.rcParams, "backend", "")
    if str(current).lower() != "agg":
        matplotlib.use("agg", force=True)


def open_figures(figures: Figures) -> None:
    """Render every open matplotlib figure into *figures* (with its description), then
    close them all (nothing happens unless the cells imported pyplot)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    for number in pyplot.get_fignums():
        buffer = io.BytesIO()
        figure = pyplot.figure(number)
        try:
            figure.savefig(buffer, format="png")
            png = buffer.getvalue()
            note = describe_figure(figure, png)
        except Exception:  # a figure that cannot be drawn is not shown
            figures.dropped += 1
            continue
        figures.add(png, note)
    pyplot.close("all")


RENDER_LIMIT = 64 * 1024 * 1024  # bytes of a figure file `/retrieve` writes
_SVG_ROOT = re.compile(
    rb"\A(?:\xef\xbb\xbf)?\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--.*?-->\s*)*"
    rb"(?:<!DOCTYPE\s+svg[^>]*>\s*)?(?:<!--.*?-->\s*)*<svg[\s>]",
    re.DOTALL,
)


class FigureFormat(enum.Enum):
    """A file format a figure is written in by `/retrieve` (rendered where it lives)."""

    PNG = "png"
    SVG = "svg"
    PDF = "pdf"

    @classmethod
    def of_path(cls, path: str) -> FigureFormat | None:
        """The format a file name's extension names, None for any other."""
        suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
        try:
            return cls(suffix)
        except ValueError:
            return None


class FigureError(ValueError):
    """A figure could not be rendered, or what came back is not a file of its format."""


def check_rendered(data: bytes, fmt: FigureFormat) -> bytes:
    """*data* if it is a *fmt* file (PNG signature, `%PDF-`, an SVG root element) within
    `RENDER_LIMIT`; else FigureError (a kernel's bytes are untrusted)."""
    if len(data) > RENDER_LIMIT:
        raise FigureError(f"the {fmt.name} is {len(data):,} bytes, over {RENDER_LIMIT:,}")
    ok = {
        FigureFormat.PNG: data.startswith(PNG_MAGIC),
        FigureFormat.PDF: data.startswith(b"%PDF-"),
        FigureFormat.SVG: _SVG_ROOT.match(data[:65536]) is not None,
    }[fmt]
    if not ok:
        raise FigureError(f"what came back is not a {fmt.name} file")
    return data
