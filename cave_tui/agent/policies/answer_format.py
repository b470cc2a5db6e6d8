"""AnswerFormat: a request that gives the answer's form as named fields gets it in that form.

Closed-form questions often end with the form of the answer: `Answer format:
@slope[slope_value], @p_value[p_value_value]`. A model computes the right value and then
answers `0.4852`, `np.float64(0.783)` or `@0.000`, and whoever reads the answer by its
fields finds none. When the request names fields this way and the answer lacks one of
them, the answer is questioned once, naming the form (with the answer put in it, when it
is one value for one field). An answer that has every field is never questioned; a
request without fields is never read further. It may ask after another policy's doubt (the
answer a look asked for, computed at last, often drops the form), still once a turn.
"""

from __future__ import annotations

import re

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.turn import Answer, Turn

# `@name[`, not inside a word or an address (`user@host[...]`).
FIELD = re.compile(r"(?<![\w.@])@([A-Za-z_]\w*)\[")
ONE_VALUE_CHARS = 60  # an answer this short on one line is one value to put in the form


def asked_fields(request: str) -> list[str]:
    """The answer fields *request* names, in order, each once."""
    return list(dict.fromkeys(FIELD.findall(request)))


def format_note(fields: list[str], answer: str) -> str:
    """The doubt: the form asked for, and the answer in it when that is plain."""
    form = ", ".join(f"@{field}[value]" for field in fields)
    note = (
        f"The request asks for the answer in the form {form}, and that answer is not in it, "
        "so it was not given yet. Give the final answer again in exactly that form, each value "
        "as the request says"
    )
    value = answer.strip()
    plain = value and not any(c in value for c in "@[]\n") and len(value) <= ONE_VALUE_CHARS
    if len(fields) == 1 and plain:
        return f"{note}, e.g. `@{fields[0]}[{value}]`."
    return note + "."


class AnswerFormat(BasePolicy):
    """An answer missing a field the request's answer format names (`@name[value]`) is
    questioned once, naming the form."""

    name = "answer_format"
    asks_after_a_doubt = True  # the answer to another doubt (compute it) may drop the form

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        fields = asked_fields(turn.task)
        if not fields or turn.memo.get(self.name):
            return None
        given = set(FIELD.findall(answer.text))
        if all(field in given for field in fields):
            return None
        turn.memo[self.name] = True
        return self.act(InterventionKind.DOUBT, format_note(fields, answer.text))
