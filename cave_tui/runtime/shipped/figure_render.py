"""A matplotlib Figure rendered to PNG, SVG or PDF bytes where it lives (in the kernel for
the kernel runtime, `_cave_figure_render`; in process otherwise): `/retrieve fig out.png`
brings back only these bytes, never the figure's pickle.
"""

from __future__ import annotations

import io
from typing import Any

FORMATS = ("png", "svg", "pdf")


class NotAFigure(TypeError):
    """The value is not a matplotlib Figure (or the format is not one of `FORMATS`)."""


class RenderedTooBig(ValueError):
    """The rendered file is over the limit the host accepts."""


def is_figure(value: Any) -> bool:
    """*value* is a matplotlib Figure (any class of `matplotlib.figure` that can save)."""
    module = type(value).__module__ or ""
    return module.startswith("matplotlib.figure") and callable(getattr(value, "savefig", None))


def render(value: Any, fmt: str, limit: int) -> bytes:
    """*value* drawn as a *fmt* file (at most *limit* bytes)."""
    if fmt not in FORMATS:
        raise NotAFigure(f"a figure is written as {', '.join(FORMATS)}, not {fmt!r}")
    if not is_figure(value):
        kind = type(value).__name__
        raise NotAFigure(f"it is a {kind}, not a matplotlib Figure")
    buffer = io.BytesIO()
    value.savefig(buffer, format=fmt)
    data = buffer.getvalue()
    if len(data) > limit:
        raise RenderedTooBig(f"its {fmt.upper()} is {len(data):,} bytes, over {limit:,}")
    return data
