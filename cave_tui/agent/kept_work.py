"""What a turn that ends without its result computed, and where: nothing computed is lost.

When a turn reaches its step limit, or the model answers without storing the result the
request names, the user is told which names this turn's cells stored (type and shape),
and a result stored under another name than the one asked for is offered by name
(`top = top_carriers`). Always on; it makes no model call and says nothing after a
turn that stored what it was asked for.
"""

from __future__ import annotations

from cave_tui.agent import events as ev
from cave_tui.agent.policies.missing_result import missing_names, stored_as
from cave_tui.agent.policies.request import wanted
from cave_tui.agent.turn import Turn
from cave_tui.printable import printable_line
from cave_tui.runtime.shipped.summary import VarInfo

_SHOWN = 8  # names listed; the rest are counted


def _held(row: VarInfo) -> str:
    shape = row.shape_text(one_dim_as_length=True)
    return printable_line(f"{row.type_name} {shape}".strip())


async def kept_work(turn: Turn, step: int, *, ended: bool) -> ev.NoticeEvent | None:
    """The notice for *turn*: *ended* at its step limit (always said when a cell stored
    anything), else answered (said only when a cell stored something and a result the
    request names is missing)."""
    try:
        rows = await turn.rows()
    except Exception:
        return None
    by_name = {row.name: row for row in rows if row.kind == "variable"}
    before = turn.before or frozenset()
    stored = [n for n in sorted(turn.stored) if n in by_name and not n.startswith("_")]
    missing = missing_names(wanted(turn), rows, before, turn.stored)
    if not missing and (not ended or not stored):
        return None
    if not ended and not stored:  # an answer that gives up on nothing computed: no more to say
        return None
    lines: list[str] = []
    if stored:
        listed = ", ".join(f"`{n}` ({_held(by_name[n])})" for n in stored[:_SHOWN])
        more = f" and {len(stored) - _SHOWN} more" if len(stored) > _SHOWN else ""
        lines.append(f"This turn computed {listed}{more}; they stay in the namespace.")
    else:
        lines.append("No cell of this turn stored a result.")
    for name in missing:
        alias = stored_as(name, [n for n in stored if n not in before], before)
        if alias:
            lines.append(
                f"`{name}` was asked for and not stored; `{alias}` may hold it: "
                f"`{name} = {alias}` keeps it under the asked name."
            )
        else:
            lines.append(f"`{name}` was asked for and not stored.")
    return ev.NoticeEvent(content="\n".join(lines), step=step, kind=ev.NoticeKind.KEPT_WORK)
