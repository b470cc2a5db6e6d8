"""A matplotlib Figure rendered to PNG, SVG or PDF bytes where it lives (in the kernel for
the kernel runtime, `_cave_figure_render`; in process otherwise): `/retrieve fig out.png`
brings back only these bytes, never the figure's pickle. `describe` says what a Figure
shows in one line (for the model); in the kernel, `note_figures` sends it beside each
figure's PNG (`NOTE_MIME` in the same display message).
"""

from __future__ import annotations

import io
from typing import Any

FORMATS = ("png", "svg", "pdf")
NOTE_MIME = "text/x-cave-figure-note"
_LABEL_CHARS = 60
_MAX_AXES = 6


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


def _label(text: object) -> str:
    """A title or axis label as one short line (a cell's own text)."""
    line = " ".join(str(text).split())
    return line if len(line) <= _LABEL_CHARS else line[: _LABEL_CHARS - 1] + "…"


def describe(figure: Any) -> str:
    """What a Figure shows: its title, each axes' title, labels and series count (lines,
    collections, bar containers); "" when it has none of these."""
    parts: list[str] = []
    suptitle = getattr(figure, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        parts.append(f"title {_label(suptitle.get_text())!r}")
    axes = list(getattr(figure, "axes", []))
    for ax in axes[:_MAX_AXES]:
        bits = []
        labels = (("title", ax.get_title()), ("x", ax.get_xlabel()), ("y", ax.get_ylabel()))
        for what, text in labels:
            if text:
                bits.append(f"{what} {_label(text)!r}")
        series = len(ax.lines) + len(ax.collections) + len(ax.containers)
        if not ax.containers and ax.patches:  # hist/bar drawn without a container
            series += 1
        bits.append(f"{series} series")
        parts.append("axes (" + ", ".join(bits) + ")")
    if len(axes) > _MAX_AXES:
        parts.append(f"{len(axes) - _MAX_AXES} more axes")
    return "; ".join(parts)


def note_figures(shell: Any) -> None:
    """Every display of a Figure in *shell* (plt.show(), the inline backend's end of a
    cell, a returned Figure) carries `describe` of it as `NOTE_MIME`, beside its PNG."""
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    class FigureNoteFormatter(BaseFormatter):
        """Not by type: the inline backend pops `Figure` from every formatter's table."""

        format_type = Unicode(NOTE_MIME)
        print_method = ObjectName("_repr_cave_figure_note_")

        def __call__(self, obj: Any) -> str | None:
            if not self.enabled or not is_figure(obj):
                return None
            try:
                return describe(obj) or None
            except Exception:  # a figure that cannot be described is still shown
                return None

    shell.display_formatter.formatters[NOTE_MIME] = FigureNoteFormatter(
        parent=shell.display_formatter
    )
