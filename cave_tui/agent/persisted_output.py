"""Output too long for the model kept whole in the namespace (upstream 0.8's persisted
outputs): each such output is bound under a name of its own (`_output_1`, `_output_2`, ...,
`Runtime.bind_unique`) and the model reads a `<persisted-output>` marker naming it, with a
preview of its head. The model slices or searches the value instead of re-running the
cell; the user opens it in the namespace like any value.

The marker's wording is upstream's, so a conversation recorded by either reads the same,
and `highest_persisted_index` finds the names a resumed conversation already handed out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from cave_tui.runtime.base import Runtime
from cave_tui.runtime.items import validate_name

PERSISTED_OUTPUT_PREFIX = "_output"
PREVIEW_CHARS = 2000  # leading characters shown with the marker (`exec_output_preview_chars`)
OPEN, CLOSE = "<persisted-output>", "</persisted-output>"
_MAX_INDEX_DIGITS = 18  # an index a marker could really hold; longer is not one of ours


def _declaration(size: int, variable: str) -> str:
    return (
        f"Output too large ({size} chars) to inline. "
        f"The full text is in the runtime variable `{variable}` (a str). "
        f"Slice it (`{variable}[:2000]`), search it "
        f"(`[l for l in {variable}.splitlines() if 'error' in l]`), "
        "or re-parse it — do not re-run the code to see it."
    )


def preview_of(text: str, chars: int) -> tuple[str, bool]:
    """The head of *text* within *chars*, cut at a newline in its second half when there is
    one; and whether anything was left out."""
    if len(text) <= chars:
        return text, False
    head = text[:chars]
    newline = head.rfind("\n")
    return (head[:newline] if newline > chars // 2 else head), True


def persist_marker(output: str, preview_chars: int, variable: str) -> str:
    """The `<persisted-output>` block the model reads for *output*, kept as *variable*;
    no preview when *preview_chars* is 0."""
    body = _declaration(len(output), variable)
    if preview_chars > 0:
        preview, more = preview_of(output, preview_chars)
        body += f"\n\nPreview (first {len(preview)} chars):\n{preview}" + ("\n..." if more else "")
    return f"{OPEN}\n{body}\n{CLOSE}"


def persisted_pointer(content: str) -> str | None:
    """The declarations of the `<persisted-output>` markers in *content* (each naming the
    value that holds the output), previews left out; None when it has none. Compaction
    keeps these when it clears an old result: the value is still there to open."""
    pointers = re.findall(
        re.escape(OPEN)
        + r"\n(Output too large .*?)(?:\n\nPreview \(first \d+ chars\):|\n"
        + re.escape(CLOSE)
        + ")",
        content,
        re.S,
    )
    return "\n".join(f"{OPEN}\n{p}\n{CLOSE}" for p in pointers) or None


def highest_persisted_index(texts: Iterable[str], prefix: str) -> int:
    """The largest N of a `prefix_N` some marker in *texts* names, else 0."""
    pattern = re.compile(
        re.escape(OPEN) + r"\nOutput too large \(\d+ chars\) to inline\. "
        r"The full text is in the runtime variable `" + re.escape(prefix) + r"_([0-9]+)`"
    )
    # A number too long to be an index (past int()'s digit limit) names nothing we gave out.
    found = (m[1] for text in texts for m in pattern.finditer(text))
    return max((int(n) for n in found if len(n) <= _MAX_INDEX_DIGITS), default=0)


@dataclass(frozen=True)
class PersistedOutputs:
    """Where an agent keeps outputs over its `max_exec_output` (upstream 0.8's arguments
    `persisted_output_prefix` and `exec_output_preview_chars`)."""

    prefix: str = PERSISTED_OUTPUT_PREFIX
    preview_chars: int = PREVIEW_CHARS

    def __post_init__(self) -> None:
        try:
            validate_name(f"{self.prefix}_1")
        except ValueError:
            raise ValueError(
                f"persisted_output_prefix {self.prefix!r} does not make a Python identifier "
                f"({self.prefix}_1)"
            ) from None
        if self.preview_chars < 0:
            raise ValueError(f"exec_output_preview_chars must be >= 0, not {self.preview_chars}")

    async def keep(self, runtime: Runtime, output: str, history: Iterable[str]) -> tuple[str, str]:
        """Bind *output* under a fresh name (past every name a marker in *history* gave
        out); returns the marker the model reads and the name."""
        start = highest_persisted_index(history, self.prefix) + 1
        variable = await runtime.bind_unique(self.prefix, output, start=start)
        return persist_marker(output, self.preview_chars, variable), variable
