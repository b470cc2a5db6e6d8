"""UnformattedAnswer: an answer still holding the placeholders of a string never formatted.

A small model writes `final_answer("@t[{t_stat:.2f}], @significant[{significant}]")`: an
f-string without its `f`, so the user is given the template instead of the values. The
answer is questioned once when it holds a `{name}` or `{name:spec}` placeholder whose name
is a variable of the namespace (the values were there to put in); braces around anything
else (a set, JSON, a template asked for with no such variable) are left alone.
"""

from __future__ import annotations

import re

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.turn import Answer, Turn

# `{name}`, `{name:.2f}`, `{name!r}`, `{name[0]}`, `{name.attr}`: a str.format field.
PLACEHOLDER = re.compile(
    r"\{([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*|\[[^\[\]{}]*\])*(?:![rsa])?(?::[^{}]*)?)\}"
)


def placeholders(text: str, names: set[str]) -> list[str]:
    """The placeholders of *text* whose name is one of *names*, each once, in order."""
    return list(dict.fromkeys(m[0] for m in PLACEHOLDER.finditer(text) if m[1] in names))


def unformatted_note(found: list[str]) -> str:
    shown = ", ".join(f"`{p}`" for p in found)
    return (
        f"The answer holds {shown} as written: the string was never formatted (an f-string "
        "without its `f`?), so that answer was not given yet. Give the final answer with the "
        'values put in, e.g. final_answer(f"...").'
    )


class UnformattedAnswer(BasePolicy):
    """An answer holding `{name}` placeholders of namespace variables is questioned once."""

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
