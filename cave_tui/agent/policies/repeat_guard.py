"""RepeatGuard: a resend of code that just failed is not run again, unless its error can pass."""

from __future__ import annotations

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.resend import resent_failure, worth_rerunning
from cave_tui.agent.turn import Turn


def repeated_failure_note(error_type: str | None) -> str:
    kind = error_type or "an error"
    return (
        f"You sent this same failing code ({kind}) again; it was not re-run, as it would fail "
        "the same way. Write different code that removes the cause."
    )


class RepeatGuard(BasePolicy):
    """Stops a model that resends failing code (at temperature 0 it always will): the copy
    leaves its context and the next call samples. A timeout or connection error reruns."""

    name = "repeat_guard"

    async def before_cell(self, turn: Turn, code: str) -> Intervention | None:
        failed = resent_failure(turn, code)
        if failed is None or worth_rerunning(turn, code):
            return None
        return self.act(
            InterventionKind.REFUSE,
            repeated_failure_note(failed.result.error_type),
            retract=True,
            resample=True,
        )
