"""AlreadyRan: the same cell again after it ran without error is a loop, not progress."""

from __future__ import annotations

from cave_tui.agent.final_answer import FINAL_NAME
from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.turn import Turn, normalize_code

ALREADY_RAN_NOTE = (
    "This code already ran without error, and its results are stored. Answer now: call "
    "final_answer(...) with the result, or change the code if the result is wrong."
)


class AlreadyRan(BasePolicy):
    """The last cell resent after it ran without error is not run again; the model is
    asked to answer."""

    name = "already_ran"

    async def before_cell(self, turn: Turn, code: str) -> Intervention | None:
        ran = turn.ran
        if not ran or FINAL_NAME in code or normalize_code(ran[-1]) != normalize_code(code):
            return None
        return self.act(InterventionKind.REFUSE, ALREADY_RAN_NOTE)
