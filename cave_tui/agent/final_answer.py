"""`final_answer(answer)`: the model ends its turn from inside the cell that finishes the task.

Without it every turn costs one more model call after the work is done, only for
the model to read "Ran OK" and say so: on a two-step task that is a third of the
prompt tokens and of the wall time. With it, the answer is also built from the
runtime's real values (`final_answer(f"{n} planes")`), never predicted.

The agent defines it in the runtime (a hidden name: not in the namespace
description, the inspector or `injected`) just before a cell that calls it, so it
survives a kernel restart or a user who rebinds the name. It is plain source with
no reference to the host and works the same in the in-process and the kernel
runtime: it prints the answer between two marker strings, and the agent lifts it
out of the cell's output. The answer counts only when the cell succeeds; a cell
that fails after calling it goes on as any failure does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cave_tui.runtime.base import ExecutionResult

FINAL_NAME = "final_answer"
OPEN = "\u27eacave-final\u27eb"
CLOSE = "\u27ea/cave-final\u27eb"
ANSWER_CHARS = 4000  # an answer is for a person to read: a huge repr is cut
_MARKED = re.compile(re.escape(OPEN) + r"(.*?)" + re.escape(CLOSE) + r"\r?\n?", re.DOTALL)


@dataclass(frozen=True)
class AcceptedAnswer:
    """The last item of a cell that called final_answer(), succeeded and was not doubted."""

    text: str


DEFINE_CODE = f'''\
def final_answer(answer):
    """End your turn: *answer* (text, or any value) is your reply to the user."""
    if isinstance(answer, str):
        text = answer
    elif getattr(answer, "ndim", None) == 0 and hasattr(answer, "item"):
        text = str(answer)  # a NumPy scalar: 0.783, not np.float64(0.783)
    else:
        text = repr(answer)
    if len(text) > {ANSWER_CHARS}:
        text = text[:{ANSWER_CHARS - 1}] + "\\u2026"
    print({OPEN!r} + text + {CLOSE!r})
'''


def take_final_answer(result: ExecutionResult) -> str | None:
    """Remove the marked answers from *result*'s output; the last one if the cell succeeded."""
    answers = _MARKED.findall(result.output)
    if not answers:
        return None
    result.output = _MARKED.sub("", result.output)
    return _trimmed(answers[-1]) if result.success else None


def _trimmed(answer: str) -> str:
    """*answer* without its surrounding blank space, but a table's first line keeps its
    indent (a frame's header is indented to sit over its columns)."""
    if "\n" not in answer.strip():
        return answer.strip()
    lines = answer.rstrip().splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


class MarkedAnswerFilter:
    """`take_final_answer`'s removal for output that arrives in pieces (a streamed cell's).

    A piece that may be the start of a marked answer is held back until the rest comes.
    """

    def __init__(self) -> None:
        self._pending = ""
        self._closed = False  # a marked answer just ended: its line end is dropped too

    def feed(self, text: str) -> str:
        """*text* without the marked answers in it (or begun in it)."""
        if self._closed and text:
            self._closed = False
            text = text.removeprefix("\r").removeprefix("\n")
        text, self._pending = self._pending + text, ""
        out: list[str] = []
        while text:
            start = text.find(OPEN)
            if start < 0:
                keep = next((k for k in range(len(OPEN) - 1, 0, -1) if text.endswith(OPEN[:k])), 0)
                out.append(text[: len(text) - keep])
                self._pending = text[len(text) - keep :]
                break
            out.append(text[:start])
            end = text.find(CLOSE, start)
            if end < 0:
                if len(text) - start > ANSWER_CHARS + len(OPEN) + len(CLOSE) + 2:
                    out.append(text[start:])  # not an answer of final_answer(): pass it on
                else:
                    self._pending = text[start:]
                break
            text = text[end + len(CLOSE) :]
            self._closed = not text
            text = text.removeprefix("\r").removeprefix("\n")
        return "".join(out)
