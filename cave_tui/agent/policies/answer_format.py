"""AnswerFormat: a request that gives the answer's form as named fields gets it in that form.

Closed-form questions often end with the form of the answer: `Answer format:
@slope[slope_value], @p_value[p_value_value]`. A model computes the right value and then
answers `0.4852`, `np.float64(0.783)` or `@0.000`, and whoever reads the answer by its
fields finds none. When the request names fields this way and the answer lacks one of
them, the answer is questioned once, naming the form: with the line a cell of the turn
printed in the form, or else the answer put in it when it is as many plain values as there
are fields. An answer that has every field is never questioned; a request without fields
is never read further. It may ask after another policy's doubt (the answer a look asked
for, computed at last, often drops the form), still once a turn. Where the answer came from a
final_answer() call whose values pair up with the fields, the doubt also gives that call in
the form (`form_call`). After the doubt, once a turn, a final_answer call that cannot give
the form (the same call again, or written text lacking a field) runs written in the form from
its own values where they pair up with the fields (a REWRITE the user sees), else is not run.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize
from dataclasses import dataclass

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.form_call import (
    call_key,
    form_call,
    lacks_fields,
    only_the_call,
    with_form_call,
)
from cave_tui.agent.turn import Answer, Turn, normalize_code

# `@name[`, not inside a word or an address (`user@host[...]`).
FIELD = re.compile(r"(?<![\w.@])@([A-Za-z_]\w*)\[")
ONE_VALUE_CHARS = 60  # an answer this short on one line is one value to put in the form
MANY_VALUE_WORDS = 3  # of several values, each at most this many words (not a sentence)
PRINTED_LINE_CHARS = 300  # a printed line longer than this is data, not an answer


def asked_fields(request: str) -> list[str]:
    """The answer fields *request* names, in order, each once."""
    return list(dict.fromkeys(FIELD.findall(request)))


def field_values(answer: str, field: str) -> list[str]:
    """What *answer* gives in each `@field[...]`, stripped, in order."""
    return [m[1].strip() for m in re.finditer(rf"@{re.escape(field)}\[([^\]]*)\]", answer)]


def format_note(fields: list[str], answer: str, *, computed: bool = False, call: str = "") -> str:
    """The doubt: the form asked for, and the answer in it when that is plain (*computed*:
    a cell's final_answer() gave it, so `@1982` is a value too: see `computed_values`), and
    the *call* that gives it (`form_call`) when there is one."""
    form = ", ".join(f"@{field}[value]" for field in fields)
    note = (
        f"The request asks for the answer in the form {form}, and that answer is not in it, "
        "so it was not given yet. Give the final answer again in exactly that form, each value "
        "as the request says"
    )
    then = f" The call that gives it: {call}" if call else ""
    values = plain_values(answer, len(fields))
    if values is None and computed:
        values = computed_values(answer, fields)
    if values is None:
        return f"{note}.{then}"
    filled = ", ".join(f"@{field}[{value}]" for field, value in zip(fields, values, strict=True))
    return f"{note}, e.g. `{filled}`.{then}"


def plain_values(answer: str, count: int) -> list[str] | None:
    """*answer* as *count* plain values in order (`1982` for one field; `0.604, yes` for
    two), or None when it is not that plainly (prose, brackets, several lines). `@0.000` is
    not one: a small model writes it for a number it has not computed."""
    text = answer.strip()
    if not text or any(c in text for c in "@[]\n") or len(text) > ONE_VALUE_CHARS:
        return None
    if count == 1:
        return [text]
    values = [part.strip() for part in text.split(",")]
    short = all(value and len(value.split()) <= MANY_VALUE_WORDS for value in values)
    return values if len(values) == count and short else None


# `@1982`: a value written where the field's name belongs (`f"@{year}"`); `@17[17]`: there
# and in the brackets too (`f"@{n}[{n}]"`).
_AT_VALUE = re.compile(r"@([^@\[\],]+)(?:\[([^@\[\],]*)\])?")


def computed_values(answer: str, fields: list[str]) -> list[str] | None:
    """The values of a computed answer that put each value where its field's name belongs
    (`@1982`, `@0.6, @yes`, `@District of Columbia`, `@17[17]`): as many as the fields, each
    of at most a few words, none of them a field's name; else None."""
    parts = [part.strip() for part in answer.strip().split(",")]
    if len(parts) != len(fields) or len(answer) > ONE_VALUE_CHARS * len(fields):
        return None
    values = []
    for part in parts:
        found = _AT_VALUE.fullmatch(part)
        if found is None:
            return None
        value = (found[2] if found[2] is not None else found[1]).strip()
        words = value.split()
        if not words or len(words) > MANY_VALUE_WORDS or set(words) & set(fields):
            return None
        values.append(value)
    return values


def form_as_code(code: str, request: str) -> bool:
    """*code* writes one of the request's answer fields as Python: `@name` where no operand
    comes before it (`@mean[m]` starts a decorator, `@mean = m` and `x = @mean[m]` are
    SyntaxErrors), outside strings, where the request names that field."""
    fields = set(asked_fields(request))
    if not fields or "@" not in code:
        return False
    tokens = _tokens(code)
    for i, token in enumerate(tokens[:-1]):
        if token.string != "@" or token.type != tokenize.OP:
            continue
        after = tokens[i + 1]
        if after.type == tokenize.NAME and after.string in fields:
            before = tokens[i - 1] if i else None
            if before is None or not _ends_an_operand(before):
                return True
    return False


def _tokens(code: str) -> list[tokenize.TokenInfo]:
    """The tokens of *code* up to where they can no longer be read (it failed to parse)."""
    out: list[tokenize.TokenInfo] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            out.append(token)
    except (tokenize.TokenError, SyntaxError):
        pass
    return out


def _ends_an_operand(token: tokenize.TokenInfo) -> bool:
    """An `@` after this token is matrix multiplication (`a @ b`, `f(x) @ w`)."""
    if token.type in (tokenize.NAME, tokenize.NUMBER, tokenize.STRING):
        return not keyword.iskeyword(token.string) or token.string in ("None", "True", "False")
    return token.type == tokenize.OP and token.string in (")", "]", "}")


FORM_AS_CODE_HINT = (
    "`@name[value]` is the form of the final answer's text, not Python (a variable's name "
    'has no `@`): compute the values, then give them as text, e.g. final_answer(f"{example}").'
)


def form_as_code_hint(request: str, code: str = "") -> str:
    """The hint for a cell that wrote the answer form as code: the call to write instead, made
    of the cell's own line when it is the form with Python inside (`@n[len(df)]`), else of
    the request's fields."""
    example = _form_line_as_text(code) or ", ".join(
        f"@{field}[{{{field}}}]" for field in asked_fields(request)
    )
    return FORM_AS_CODE_HINT.format(example=example)


# One whole field written as code: `@name[...]`, one level of brackets inside.
_FIELD_WRITTEN = re.compile(r"@([A-Za-z_]\w*)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]")


def _form_line_as_text(code: str) -> str:
    """`@a[x.mean()], @b[len(y)]`, a line of *code* that is only fields each holding a Python
    expression, as the f-string's text `@a[{x.mean()}], @b[{len(y)}]`; else "" (also for a
    field holding a bare literal, `@n[31]`: a number no code computed is not written back)."""
    for line in code.splitlines():
        line = line.strip()
        fields = list(_FIELD_WRITTEN.finditer(line))
        if not fields or _FIELD_WRITTEN.sub("", line).replace(",", "").strip():
            continue
        parts = []
        for field in fields:
            inner = field[2].strip()
            if not inner or '"' in inner or "{" in inner or "\\" in inner:
                break
            try:
                parsed = ast.parse(inner, mode="eval")
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                break
            if isinstance(parsed.body, ast.Constant):  # a value no code computed: not endorsed
                break
            parts.append(f"@{field[1]}[{{{inner}}}]")
        else:
            return ", ".join(parts)
    return ""


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
        code = answer.cell.code if answer.cell is not None else ""
        printed = printed_form(turn, fields)
        if printed is not None:
            note = printed_note(fields, printed)
        else:
            call = form_call(code, fields)
            note = format_note(fields, answer.text, computed=bool(code), call=call)
        turn.memo[self.name] = _Doubted(call_key(code), normalize_code(code), note)
        return self.act(InterventionKind.DOUBT, note)

    async def before_cell(self, turn: Turn, code: str) -> Intervention | None:
        """After the doubt, a final_answer call that cannot give the form (the doubted call
        sent again as it was, as a small model at temperature 0 does, or text without one of
        the fields), once a turn: run with the call written in the form from its own values
        where they pair up with the fields (`form_call`), else not run (the next call
        samples)."""
        doubted = turn.memo.get(self.name)
        if not isinstance(doubted, _Doubted) or doubted.resent:
            return None
        key = call_key(code)
        fields = asked_fields(turn.task)
        lacking = lacks_fields(code, fields) if key else []
        # The same call on the same values: the doubted cell again, or the call alone (a
        # changed cell may have put the form in the variable the call passes).
        same = bool(key) and key == doubted.call
        same = same and (normalize_code(code) == doubted.cell or only_the_call(code))
        if not same and not lacking:
            return None
        doubted.resent = True
        rewritten = with_form_call(code, fields)
        if rewritten:
            ran = form_call(code, fields)
            note = f"Your final_answer call again gave no answer in the form; it ran as {ran}."
            return self.act(InterventionKind.REWRITE, note, code=rewritten)
        if same:
            note = f"That final_answer call gives the same answer, not in the form. {doubted.note}"
        else:
            shown = ", ".join(f"@{field}[...]" for field in lacking)
            note = f"That final_answer call gives an answer without {shown}. {doubted.note}"
        return self.act(InterventionKind.REFUSE, note, retract=True, resample=True)


@dataclass
class _Doubted:
    """This turn's doubt: the doubted cell's final_answer call (`call_key`), its code
    (`normalize_code`) and the note."""

    call: str
    cell: str
    note: str
    resent: bool = False


def printed_form(turn: Turn, fields: list[str]) -> str | None:
    """The last line a cell of this turn printed with every field of the form in it (the
    model wrote the answer in the form, then gave another), or None."""
    for cell in reversed(turn.cells):
        for line in reversed(cell.result.output.splitlines()):
            named = set(FIELD.findall(line))
            if len(line) <= PRINTED_LINE_CHARS and all(field in named for field in fields):
                return line.strip()
    return None


def printed_note(fields: list[str], printed: str) -> str:
    """The doubt when a cell printed the form: the answer given lacks it, the cell had it."""
    form = ", ".join(f"@{field}[value]" for field in fields)
    return (
        f"The request asks for the answer in the form {form}, and that answer is not in it, "
        f"so it was not given yet. Your cell printed `{printed}`: give the final answer in that "
        "form, each value as the request says (check each against the request)."
    )
