"""UnformattedAnswer: an answer still holding the placeholders of a string never formatted.

A small model writes `final_answer("@t[{t_stat:.2f}], @significant[{significant}]")`: an
f-string without its `f`, so the user is given the template instead of the values. The
answer is questioned once when it holds a field (`{name}`, `{name:spec}`, `{round(name, 2)}`)
whose expression reads a variable of the namespace (the values were there to put in); braces
around anything else (a set, JSON, a template asked for with no such variable) are left alone.
"""

from __future__ import annotations

import ast
import itertools
import re

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.turn import Answer, Turn

# One `{...}` field of a string that was never formatted; `{{`/`}}` are escaped braces.
FIELD = re.compile(r"(?<!\{)\{([^{}\n]{1,200})\}(?!\})")
MAX_FIELDS = 64  # fields read in one answer (each parsed at most MAX_CUTS + 1 times)
MAX_CUTS = 8


def _field_expression(inner: str) -> ast.Expression | None:
    """The Python expression of a format field (`x`, `round(x, 2)`, `x:.2f`, `x!r`, `x=`),
    or None when no prefix of it is one."""
    cuts = [len(inner), *[i for i, ch in enumerate(inner) if ch in ":!"][:MAX_CUTS]]
    for cut in cuts:
        head = inner[:cut].strip()
        head = head.removesuffix("=") if head.endswith("=") and not head.endswith("==") else head
        if not head:
            continue
        try:
            return ast.parse(head, mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return None


def placeholders(text: str, names: set[str]) -> list[str]:
    """The fields of *text* (`{x}`, `{x:.2f}`, `{round(x, 2)}`, `{rows[0]}`) whose expression
    reads one of *names*, each once, in order."""
    found: list[str] = []
    for match in itertools.islice(FIELD.finditer(text), MAX_FIELDS):
        expression = _field_expression(match[1])
        if expression is None:
            continue
        read = {node.id for node in ast.walk(expression) if isinstance(node, ast.Name)}
        if read & names:
            found.append(match[0])
    return list(dict.fromkeys(found))


def unformatted_note(found: list[str]) -> str:
    shown = ", ".join(f"`{p}`" for p in found)
    return (
        f"The answer holds {shown} as written: the string was never formatted (an f-string "
        "without its `f`?), so that answer was not given yet. Give the final answer with the "
        'values put in, e.g. final_answer(f"...").'
    )


class UnformattedAnswer(BasePolicy):
    """An answer holding `{...}` fields that read namespace variables is questioned once."""

    name = "unformatted_answer"
    asks_after_a_doubt = True  # the answer a look or a form's doubt asked for may be one

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        if "{" not in answer.text or turn.memo.get(self.name):
            return None
        found = placeholders(answer.text, {row.name for row in await turn.rows()})
        if not found:
            return None
        turn.memo[self.name] = True
        return self.act(InterventionKind.DOUBT, unformatted_note(found))
