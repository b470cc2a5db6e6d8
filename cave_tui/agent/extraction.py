"""Finding the code in a model reply: the streaming parser's reading first.

The cell is what `StreamingTextParser` reads as code (its ```` ```python ```` blocks,
the same reading that ends the reply while it streams: `agent.streaming.FirstBlockCut`),
so a block opened inside a sentence, closed by an indented fence or indented whole runs
as the parser read it. A reply with other fences (```` ```py ````, bare, `~~~`) is read
as Markdown:

markdown-it-py (already installed with rich and textual) finds the fenced
blocks. We accept `python`, `py`, `python3`, `ipython` fences (any case) and bare
fences whose content parses as Python. A line of triple backticks inside a
multi-line string closes a fence in CommonMark; when a Python block does not
parse, we extend it to a later closing fence for which it does. Several blocks
in one reply are joined, in order, into one cell.

A reply with no fence at all that is, whole, Python doing something (an
assignment, an import, a call, a loop...) is code as well: small models drop the
fences now and then, and taking that reply for the final answer loses the step.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cave_tui.parsing.cell_syntax import is_cell_code
from cave_tui.parsing.streaming import SegmentType, StreamingTextParser

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

PYTHON_INFOS = frozenset({"python", "py", "python3", "py3", "ipython", "ipython3", "pycon"})
_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*$")
_FENCE_ONLY = re.compile(r"^\s*(`{3,}|~{3,})\s*$")


@functools.cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


@dataclass
class CodeBlock:
    code: str
    info: str
    start_line: int
    end_line: int


def extract_blocks(text: str, identifier: str = "python") -> list[CodeBlock]:
    """All code blocks of *text* that should run, in order."""
    infos = PYTHON_INFOS | {identifier.lower()}
    lines = text.splitlines()
    tokens = _parser().parse(text)
    blocks: list[CodeBlock] = []
    skip_until = -1
    for token in tokens:
        if token.type != "fence" or token.map is None:
            continue
        start, end = token.map
        if start < skip_until:
            continue
        info = (token.info or "").strip().split()[0].lower() if token.info.strip() else ""
        code = token.content
        if info and info not in infos:
            continue
        if not info and not (code.strip() and is_cell_code(code)):
            continue
        if info and not is_cell_code(code):
            extended = _extend(lines, start, end, token.markup)
            if extended is not None:
                code, end = extended
        if code.strip():
            blocks.append(
                CodeBlock(code=code.rstrip("\n") + "\n", info=info, start_line=start, end_line=end)
            )
            skip_until = end
    return blocks


def _extend(lines: list[str], start: int, end: int, markup: str) -> tuple[str, int] | None:
    """Try later closing fences until the block parses (backticks inside a string)."""
    fence_char = markup[0]
    for j in range(end, len(lines)):
        match = _CLOSE.match(lines[j])
        if match and match.group(1)[0] == fence_char and len(match.group(1)) >= len(markup):
            candidate = "\n".join(lines[start + 1 : j]) + "\n"
            if is_cell_code(candidate):
                return candidate, j + 1
    return None


_ACTIONS = (
    ast.Assign,
    ast.AugAssign,
    ast.Import,
    ast.ImportFrom,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.If,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Delete,
)


def bare_code(text: str) -> str | None:
    """*text* itself when it is unfenced Python that acts, else None.

    Prose almost never parses; what does (`Yes`, `42`, `df.shape`) is a lone
    expression, which is not taken: a statement must assign, import, loop, define,
    or call something.
    """
    lines = text.strip().splitlines()
    while lines and _FENCE_ONLY.match(lines[-1]):  # a stray closing fence, no opening one
        lines.pop()
    code = "\n".join(lines).strip()
    if not code or "```" in code:
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    acts = any(
        isinstance(node, _ACTIONS)
        or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call | ast.Await))
        # `Answer: 42` parses as an annotation; only `x: int = 1` assigns.
        or (isinstance(node, ast.AnnAssign) and node.value is not None)
        for node in tree.body
    )
    return code if acts else None


def extract_code(text: str, identifier: str = "python") -> str | None:
    """The cell to run for this reply, or None when it is a final answer.

    The code as written, without the newline before the closing fence (as 0.8's
    `CodeEvent.code` and `code_snippets` give it).
    """
    blocks = extract_blocks(text, identifier)
    if all(b.info == identifier.lower() for b in blocks):  # no fence the parser skips
        parsed = parsed_code(text, identifier)
        if parsed is not None:
            return parsed
    if not blocks:
        return bare_code(text)
    return "\n".join(b.code.rstrip("\n") for b in blocks)


def parsed_code(text: str, identifier: str = "python") -> str | None:
    """The code blocks `StreamingTextParser` reads in *text*, joined; None when it reads none."""
    parser = StreamingTextParser(identifier)
    segments = parser.process_chunk(text) + parser.flush()
    code = [s.content for s in segments if s.type is SegmentType.CODE]
    return "\n".join(code) if code else None


def prose_of(text: str, identifier: str = "python") -> str:
    """The reply with its code blocks removed (for summaries and final answers)."""
    lines = text.splitlines()
    keep = [True] * len(lines)
    for block in extract_blocks(text, identifier):
        for i in range(block.start_line, min(block.end_line, len(lines))):
            keep[i] = False
    return "\n".join(line for line, k in zip(lines, keep, strict=True) if k).strip()
