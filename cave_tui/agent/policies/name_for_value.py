"""NameForValue: an answer that is only the name of the variable the turn computed.

A small model stores its result and then answers `final_answer("monthly")`, the name in
quotes, or replies with the bare name: the user gets a word instead of the data. The answer
is questioned once, only when it is exactly the name of a variable a cell of this turn
bound and that variable is not itself a string (whose value could be that word).
"""

from __future__ import annotations

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.turn import Answer, Turn

STRING_TYPES = frozenset({"str", "bytes", "NoneType"})


def name_note(name: str) -> str:
    """The doubt: ends with the one cell to send, which a small model copies."""
    return (
        f"`{name}` is the name of the variable that holds the result, not the result, so "
        "that answer was not given yet. Answer with its value, the name without quotes:\n"
        f"```python\nfinal_answer({name})\n```"
    )


class NameForValue(BasePolicy):
    """An answer that is the bare name of a non-string variable bound this turn is
    questioned once: the value was meant."""

    name = "name_for_value"

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        name = answer.text.strip().strip("`'\"")
        if not name.isidentifier():
            return None
        bound = {changed for cell in turn.cells if cell.ok for changed in cell.result.changed}
        if name not in bound:
            return None
        rows = {row.name: row for row in await turn.rows()}
        row = rows.get(name)
        if row is None or row.type_name in STRING_TYPES:
            return None
        return self.act(InterventionKind.DOUBT, name_note(name))
