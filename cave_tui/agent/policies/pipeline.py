"""`PolicyPipeline`: runs the policies at each point of a turn, in order.

Before a cell the first refusal wins (a REWIND counts only when the turn could be
rewound); after a cell every policy speaks; an answer is questioned at most once per
turn, by every policy that doubts it (and once more by a policy that checks the answer's
form, `asks_after_a_doubt`).
"""

from __future__ import annotations

from collections.abc import Sequence

from cave_tui.agent.policies.base import AgentPolicy, BasePolicy, Intervention, InterventionKind
from cave_tui.agent.turn import Answer, CellRecord, Turn


def _overrides(policy: AgentPolicy, hook: str) -> bool:
    """*policy* does something at *hook* (BasePolicy's no-op is skipped: the loop is hot)."""
    method = getattr(type(policy), hook, None)
    return method is not None and method is not getattr(BasePolicy, hook)


class PolicyPipeline:
    """The policies of one agent, with one method per point of the turn."""

    def __init__(self, policies: Sequence[AgentPolicy]) -> None:
        self.policies = list(policies)
        hooks = ("before_request", "before_cell", "after_cell", "before_answer")
        self._at = {h: [p for p in self.policies if _overrides(p, h)] for h in hooks}

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.policies]

    def reply_lead(self, python_block_identifier: str) -> Intervention | None:
        """The LEAD of the first policy with a `reply_lead`: `request` is the text the reply
        begins with (the block identifier filled in), `text` what the user is told."""
        for policy in self.policies:
            lead = getattr(policy, "reply_lead", "")  # a policy to the protocol may lack it
            if isinstance(lead, str) and lead:
                begun = lead.replace("{python_block_identifier}", python_block_identifier)
                told = (
                    f"Each reply of this turn begins with {begun.strip()!r}: "
                    "the model answers in code."
                )
                return Intervention(policy.name, InterventionKind.LEAD, told, request=begun)
        return None

    async def before_request(self, turn: Turn) -> list[Intervention]:
        """Set `turn.tips` for the next model call; return the TIPs not yet shown this turn."""
        found = [await p.before_request(turn) for p in self._at["before_request"]]
        tips = [iv for iv in found if iv is not None]
        turn.tips = [tip.text for tip in tips]
        new = [tip for tip in tips if tip.text not in turn.tips_shown]
        turn.tips_shown.update(tip.text for tip in new)
        return new

    async def before_cell(self, turn: Turn, code: str) -> Intervention | None:
        """The first refusal of *code*; a REWIND is applied here, and skipped if it cannot be."""
        for policy in self._at["before_cell"]:
            iv = await policy.before_cell(turn, code)
            if iv is None:
                continue
            if iv.kind is InterventionKind.REWIND and not turn.rewind(iv.request):
                continue
            return iv
        return None

    async def after_cell(self, turn: Turn, cell: CellRecord) -> list[Intervention]:
        """What the policies add to the cell's observation; a HINT joins `cell.hints`.
        REWINDs are returned unapplied: the observation must be recorded first."""
        found: list[Intervention] = []
        for policy in self._at["after_cell"]:
            iv = await policy.after_cell(turn, cell)
            if iv is not None:
                if iv.kind is InterventionKind.HINT:
                    cell.hints.append(iv.text)
                found.append(iv)
        return found

    async def before_answer(self, turn: Turn, answer: Answer) -> list[Intervention]:
        """The doubts about *answer*, once per turn: after the turn's first doubt, only from
        the policies that may ask after one (`asks_after_a_doubt`)."""
        asking = [
            p
            for p in self._at["before_answer"]
            if not turn.doubted or getattr(p, "asks_after_a_doubt", False)
        ]
        found = [await p.before_answer(turn, answer) for p in asking]
        doubts = [iv for iv in found if iv is not None]
        turn.doubted = turn.doubted or bool(doubts)
        return doubts
