"""A cell's figure in the code log, drawn with the terminal's image protocol.

`textual-image` draws it with Kitty's graphics protocol or Sixel where the terminal has one
(told by its environment, `terminal_mode`: asking it would read its answer from the keys),
and with Unicode half-blocks otherwise (`ImageMode`; `CAVE_IMAGES` forces one). A figure is
drawn at most `MAX_ROWS` rows high and as wide as the log, keeping its aspect ratio; its
PNG (checked and bounded by the runtime, runtime/figures.py) is decoded only here.
"""

from __future__ import annotations

import enum
import functools
import io
import os
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, cast

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
# Terminals known to draw the Kitty graphics protocol's Unicode placeholders, and Sixel.
_KITTY_TERMS = ("xterm-kitty", "xterm-ghostty")
_SIXEL_TERMS = ("foot", "foot-extra", "mlterm", "contour", "wezterm", "yaft-256color")
_SIXEL_PROGRAMS = ("WezTerm", "iTerm.app", "mintty")


def terminal_mode(env: Mapping[str, str]) -> ImageMode:
    """The protocol the terminal has, from its environment (never by asking it: an answer
    read from the input would eat what the user types as the app starts): Kitty, Sixel,
    else half-blocks. Under tmux or screen, half-blocks."""
    term = env.get("TERM", "")
    if env.get("TMUX") or term.startswith(("screen", "tmux")):
        return ImageMode.HALF_BLOCKS
    if term in _KITTY_TERMS or env.get("KITTY_WINDOW_ID"):
        return ImageMode.KITTY
    if term in _SIXEL_TERMS or env.get("TERM_PROGRAM") in _SIXEL_PROGRAMS:
        return ImageMode.SIXEL
    if env.get("KONSOLE_VERSION"):
        return ImageMode.SIXEL
    return ImageMode.HALF_BLOCKS


def resolved(mode: ImageMode) -> ImageMode:
    """*mode*, AUTO made the one the terminal has (`terminal_mode`)."""
    return terminal_mode(os.environ) if mode is ImageMode.AUTO else mode


def cell_pixels() -> tuple[int, int]:
    """The terminal's cell size in pixels from the kernel's window size (no query), else
    `DEFAULT_CELL`."""
    import fcntl
    import struct
    import termios

    for stream in (sys.__stdout__, sys.__stdin__):
        try:
            packed = fcntl.ioctl(stream.fileno(), termios.TIOCGWINSZ, b"\0" * 8)  # type: ignore[union-attr]
        except (AttributeError, OSError, ValueError):
            continue
        rows, columns, width, height = struct.unpack("HHHH", packed)
        if rows and columns and width and height:
            return width // columns, height // rows
    return DEFAULT_CELL


@functools.cache
def _images() -> ModuleType:
    """textual-image's widgets, imported once with its terminal queries off: it asks the
    terminal on import when stdout is a tty, and the answers would be read as keys once the
    app runs (or eat the keys typed while it starts). Its cell size is set from `cell_pixels`."""
    from textual_image import _terminal

    _terminal.get_cell_size._result = _terminal.CellSize(*cell_pixels())  # type: ignore[attr-defined]
    real = sys.__stdout__
    sys.__stdout__ = _NoTerminal()  # type: ignore[misc,assignment]
    try:
        import textual_image.widget as images
    finally:
        sys.__stdout__ = real  # type: ignore[misc]
    return images


class _NoTerminal(io.StringIO):
    """What textual-image sees as stdout while it is imported: no tty to ask."""

    def isatty(self) -> bool:
        return False


def image_class(mode: ImageMode) -> Callable[..., Widget]:
    """The textual-image widget class drawing in *mode* (AUTO: `resolved`)."""
    images = _images()
    match resolved(mode):
        case ImageMode.KITTY:
            return cast("Callable[..., Widget]", images.TGPImage)
        case ImageMode.SIXEL:
            return cast("Callable[..., Widget]", images.SixelImage)
    return cast("Callable[..., Widget]", images.HalfcellImage)


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
        self._columns = columns
        cell = _images().get_cell_size()
        width, height = cells_for(self.pixels, (cell.width, cell.height), max(columns - 2, 8))
        self.image.styles.width = width
        self.image.styles.height = height
        if self.half_blocks and self._drawn != (width, 2 * height):
            self._drawn = (width, 2 * height)
            self.image.image = self.picture.resize(self._drawn, reducing_gap=2.0)  # type: ignore[attr-defined]
