"""GivenTools: a request that names a function or class the user gave gets a reminder to
call it as it is.

A small model writes its own `def season(...)` over the injected one and computes with it
(docs/prompt-tuning.md, the policy layer). The cell is never refused for that (KeepGiven);
this tip comes before the first reply, in any language, since it keys on the name alone,
and leaves the model free to change the function when the request asks for it.
"""

from __future__ import annotations

import re

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.turn import Turn

TOOL_KINDS = ("function", "type")


def given_tools_named(request: str, given: set[str], kinds: dict[str, str]) -> list[str]:
    """The given functions and classes that *request* names, in namespace order."""
    return [
        name
        for name, kind in kinds.items()
        if name in given
        and kind in TOOL_KINDS
        and re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", request)
    ]


def tools_tip(names: list[str]) -> str:
    listed = ", ".join(f"`{name}`" for name in names)
    if len(names) == 1:
        return (
            f"{listed} is given: call it as it is, and do not define it again unless the "
            "request asks to change it."
        )
    return (
        f"{listed} are given: call them as they are, and do not define them again unless "
        "the request asks to change them."
    )


class GivenTools(BasePolicy):
    """Reminds the model to call a given function or class the request names, not to
    write its own."""

    name = "given_tools"

    async def before_request(self, turn: Turn) -> Intervention | None:
        given = turn.given()
        if not given:
            return None
        kinds = {row.name: row.kind for row in await turn.rows()}
        names = given_tools_named(turn.task, given, kinds)
        return self.act(InterventionKind.TIP, tools_tip(names)) if names else None
