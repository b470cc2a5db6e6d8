"""A cell's figure in the code log, drawn with the terminal's image protocol.

`textual-image` draws it with Kitty's graphics protocol or Sixel where the terminal answers
that it has one, and with Unicode half-blocks otherwise (`ImageMode`; `CAVE_IMAGES` forces
one). The terminal is asked once, before the app takes it (`probe_terminal`). A figure is
drawn at most `MAX_ROWS` rows high and as wide as the log, keeping its aspect ratio; its
PNG (checked and bounded by the runtime, runtime/figures.py) is decoded only here.
"""

from __future__ import annotations

import enum
import io
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.containers import VerticalGroup
from textual.widgets import Static

from cave_tui.printable import plain_text
from cave_tui.runtime.figures import png_size

if TYPE_CHECKING:
    from textual.app import ComposeResult
    from textual.events import Resize
    from textual.widget import Widget

MAX_ROWS = 20  # a figure's height in the log, in rows
MAX_DECODED = 1600  # pixels on the longer side kept after decoding (the log draws fewer)
ENV = "CAVE_IMAGES"


class ImageMode(enum.Enum):
    """How figures are drawn: what the terminal has (AUTO), or one way forced."""

    AUTO = "auto"
    KITTY = "kitty"  # the Kitty terminal graphics protocol
    SIXEL = "sixel"
    HALF_BLOCKS = "halfblocks"  # Unicode half-blocks: any terminal with colours

    @classmethod
    def from_env(cls) -> ImageMode:
        """The mode `CAVE_IMAGES` names (AUTO when unset or unknown)."""
        try:
            return cls(os.environ.get(ENV, "auto").strip().lower())
        except ValueError:
            return cls.AUTO


DEFAULT_CELL = (10, 20)  # pixels of a cell when the terminal does not say


def probe_terminal() -> None:
    """Ask the terminal which image protocol it has and its cell size (textual-image does it
    on import, and cannot once the app runs): call before the app starts. A terminal that
    reports a size of 0 columns (textual-image divides by it) gets the default cell size."""
    try:
        import textual_image.widget
    except ZeroDivisionError:
        from textual_image import _terminal

        _terminal.get_cell_size._result = _terminal.CellSize(*DEFAULT_CELL)  # type: ignore[attr-defined]
        import textual_image.widget  # noqa: F401


def resolved(mode: ImageMode) -> ImageMode:
    """*mode*, AUTO made the one the terminal has: Kitty or Sixel, else half-blocks."""
    if mode is not ImageMode.AUTO:
        return mode
    from textual_image import renderable

    if renderable.Image is renderable.TGPImage:
        return ImageMode.KITTY
    if renderable.Image is renderable.SixelImage:
        return ImageMode.SIXEL
    return ImageMode.HALF_BLOCKS


def image_class(mode: ImageMode) -> Callable[..., Widget]:
    """The textual-image widget class drawing in *mode* (AUTO: `resolved`)."""
    from textual_image import widget as images

    match resolved(mode):
        case ImageMode.KITTY:
            return images.TGPImage
        case ImageMode.SIXEL:
            return images.SixelImage
    return images.HalfcellImage


def cells_for(
    pixels: tuple[int, int], cell: tuple[int, int], columns: int, rows: int = MAX_ROWS
) -> tuple[int, int]:
    """(columns, rows) a *pixels* image takes with *cell*-sized cells, at most *columns*
    wide and *rows* high, its aspect ratio kept."""
    width = pixels[0] / max(cell[0], 1)
    height = pixels[1] / max(cell[1], 1)
    scale = min(columns / width, rows / height)
    return max(1, round(width * scale)), max(1, round(height * scale))


class FigureView(VerticalGroup):
    """One figure under its cell: the image, then a caption (its number, where it is saved)."""

    def __init__(
        self, png: bytes, caption: str, columns: int, mode: ImageMode | None = None
    ) -> None:
        """*columns*: the width it is laid out in (refitted when it changes)."""
        super().__init__(classes="figure")
        from PIL import Image as PILImage

        mode = resolved(mode or ImageMode.from_env())
        picture = PILImage.open(io.BytesIO(png))
        picture.load()
        self.pixels = png_size(png) or picture.size
        picture.thumbnail((MAX_DECODED, MAX_DECODED))
        self.picture = picture.convert("RGB")
        # Half-blocks draw two pixels a cell: the picture is resized to that once per size.
        self.half_blocks = mode is ImageMode.HALF_BLOCKS
        self._drawn: tuple[int, int] | None = None
        self.image = image_class(mode)(self.picture, classes="figure-image")
        self.caption = Static(plain_text(caption), classes="figure-caption")
        self._columns = 0
        self._fit(columns)  # sized before its first layout: laid out once

    def compose(self) -> ComposeResult:
        yield self.image
        yield self.caption

    def on_resize(self, event: Resize) -> None:
        if event.size.width and event.size.width != self._columns:
            self._fit(event.size.width)

    def _fit(self, columns: int) -> None:
        from textual_image._terminal import get_cell_size

        self._columns = columns
        cell = get_cell_size()
        width, height = cells_for(self.pixels, (cell.width, cell.height), max(columns - 2, 8))
        self.image.styles.width = width
        self.image.styles.height = height
        if self.half_blocks and self._drawn != (width, 2 * height):
            self._drawn = (width, 2 * height)
            self.image.image = self.picture.resize(self._drawn, reducing_gap=2.0)  # type: ignore[attr-defined]
