"""Short, model-friendly tracebacks: the exception line plus the innermost frames.

IPython's own tracebacks are long, coloured and full of its internals; the model
needs the cell line that failed and the error. Frames from IPython itself are
dropped, cell filenames become `<cell>`, and deep stacks keep the first cell
frame and the innermost few.
"""

from __future__ import annotations

import re
import traceback
from types import TracebackType
from typing import Any

INNER_FRAMES = 3
_CELL_FILE = re.compile(r"^<ipython-input-\d+-[0-9a-f]+>$|/ipykernel_\d+/\d+\.py$|^<cell>$")
_INTERNAL = ("/IPython/", "/ipykernel/", "/cave_tui/runtime/", "/asyncio/")


# codeop's flag (Python 3.11+) for consoles that ask for more lines: with it, `print((1)`
# fails as "incomplete input" instead of Python's "'(' was never closed".
_ALLOW_INCOMPLETE_INPUT = 0x4000


def precise_syntax_errors(shell: Any) -> None:
    """Make *shell* compile a cell as Python compiles a file, so a cell that does not parse
    fails with Python's own message and line: IPython's compiler inherits codeop's
    "allow incomplete input" flag, meant for a console deciding whether to read more."""
    import codeop

    flag = getattr(codeop, "PyCF_ALLOW_INCOMPLETE_INPUT", _ALLOW_INCOMPLETE_INPUT)
    compiler = getattr(shell, "compile", None)
    if compiler is not None and isinstance(getattr(compiler, "flags", None), int):
        compiler.flags &= ~flag


def is_cell_file(filename: str) -> bool:
    return bool(_CELL_FILE.search(filename))


def format_exception(exc: BaseException, inner_frames: int = INNER_FRAMES) -> str:
    """Render *exc* as a compact traceback ending with the exception line."""
    tb: TracebackType | None = exc.__traceback__
    frames = traceback.extract_tb(tb) if tb is not None else []
    # Drop the runtime's own frames that precede the first cell frame.
    first_cell = next((i for i, f in enumerate(frames) if is_cell_file(f.filename)), None)
    if first_cell is not None:
        frames = frames[first_cell:]
    else:
        frames = [f for f in frames if not any(p in f.filename for p in _INTERNAL)]
    lines: list[str] = []
    if frames:
        lines.append("Traceback (most recent call last):")
        shown = list(frames)
        omitted = 0
        if len(shown) > inner_frames + 1:
            omitted = len(shown) - inner_frames - 1
            shown = [shown[0], *shown[-inner_frames:]]
        for i, frame in enumerate(shown):
            if omitted and i == 1:
                lines.append(f"  [… {omitted} frames omitted …]")
            filename = "<cell>" if is_cell_file(frame.filename) else frame.filename
            where = f"  File {filename}, line {frame.lineno}, in {frame.name}"
            lines.append(where)
            if frame.line:
                lines.append(f"    {frame.line.strip()}")
    only = traceback.format_exception_only(type(exc), exc)
    text = "".join(only).rstrip("\n")
    text = re.sub(r'File "<ipython-input-\d+-[0-9a-f]+>"', "File <cell>", text)
    lines.append(text)
    return "\n".join(lines)
