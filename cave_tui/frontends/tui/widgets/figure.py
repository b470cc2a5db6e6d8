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


def probe_terminal() -> None:
    """Ask the terminal which image protocol it has (textual-image does it on import, and
    cannot once the app runs): call before the app starts."""
    import textual_image.widget  # noqa: F401


def image_class(mode: ImageMode) -> Callable[..., Widget]:
    """The textual-image widget class drawing in *mode* (AUTO: Kitty or Sixel when the
    terminal has it, else half-blocks)."""
    from textual_image import renderable
    from textual_image import widget as images

    match mode:
        case ImageMode.KITTY:
            return images.TGPImage
        case ImageMode.SIXEL:
            return images.SixelImage
        case ImageMode.HALF_BLOCKS:
            return images.HalfcellImage
    if renderable.Image in (renderable.TGPImage, renderable.SixelImage):
        return images.Image
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

    def __init__(self, png: bytes, caption: str, mode: ImageMode | None = None) -> None:
        super().__init__(classes="figure")
        from PIL import Image as PILImage

        picture = PILImage.open(io.BytesIO(png))
        picture.load()
        picture.thumbnail((MAX_DECODED, MAX_DECODED))
        self.pixels = png_size(png) or picture.size
        self.image = image_class(mode or ImageMode.from_env())(picture, classes="figure-image")
        self.caption = Static(plain_text(caption), classes="figure-caption")

    def compose(self) -> ComposeResult:
        yield self.image
        yield self.caption

    def on_mount(self) -> None:
        self._fit(self.size.width or self.app.size.width)

    def on_resize(self, event: Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, columns: int) -> None:
        from textual_image._terminal import get_cell_size

        cell = get_cell_size()
        width, height = cells_for(self.pixels, (cell.width, cell.height), max(columns - 2, 8))
        self.image.styles.width = width
        self.image.styles.height = height
