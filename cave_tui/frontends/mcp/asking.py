"""Questions put to the MCP client's user by form elicitation, or not at all.

Two moments, two mechanisms of the SDK:
- before a tool runs (a `run` cell's approval): a resolver (`approval_request`) returns
  an `Elicit` marker; the SDK asks by `elicitation/create` on the 2025 protocol versions
  and by an `InputRequiredResult` (the client answers and calls again) on 2026-07-28;
- while a tool runs (a cell of `ask`'s turn, a command's yes/no): `ClientQuestions` sends
  `elicitation/create` mid-call, which only the 2025 versions carry (2026-07-28 has no
  server-to-client request inside a call).
A client that declared no elicitation capability is never asked; the caller says why.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Protocol

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, Elicit
from mcp.shared.exceptions import MCPError
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, Field

from cave_tui.printable import printable

CODE_SHOWN = 20_000  # characters of a cell's code put in the question
NO_BACK_CHANNEL_VERSION = "2026-07-28"  # from this version on, nothing is asked mid-call

NO_ELICITATION = "this client declared no elicitation capability, so it cannot be asked"
NOT_MID_CALL = (
    "this client speaks MCP {version}, where a question cannot be asked while a tool runs "
    "(connect with protocol 2025-11-25 or earlier to approve each of the agent's cells)"
)


class RunCell(BaseModel):
    """The form of a cell's approval."""

    run: bool = Field(description="Run this code in cave's namespace")


class Confirm(BaseModel):
    """The form of a yes/no question."""

    yes: bool = Field(description="Yes")


class Consent(enum.Enum):
    """What became of a cell's approval before it was run."""

    NOT_NEEDED = "approval mode is off"
    GIVEN = "the user approved it"
    DECLINED = "the user did not approve it"
    CANNOT_ASK = NO_ELICITATION


def approval_message(code: str) -> str:
    """The question approving *code* (printable; a long cell cut)."""
    shown = code if len(code) <= CODE_SHOWN else code[:CODE_SHOWN] + "\n[… cut …]"
    return f"cave asks to run this Python code in its namespace:\n\n{printable(shown)}"


def declares_elicitation(context: Context[Any, Any]) -> bool:
    """The client declared form elicitation (an empty `elicitation` object means form)."""
    declared = context.client_capabilities
    if declared is None or declared.elicitation is None:
        return False
    return declared.elicitation.form is not None or declared.elicitation.url is None


def approval_request(
    code: str, context: Context[Any, Any], asked: bool
) -> Consent | Elicit[RunCell]:
    """Before a cell runs: no question when *asked* is False (approval mode off), else
    the form to elicit, or `CANNOT_ASK` when the client cannot answer."""
    if not asked:
        return Consent.NOT_NEEDED
    if not declares_elicitation(context):
        return Consent.CANNOT_ASK
    return Elicit(approval_message(code), RunCell)


def consent_of(outcome: ElicitationResult[Any]) -> Consent:
    """The `Consent` an approval's outcome (resolved by the SDK) stands for."""
    if not isinstance(outcome, AcceptedElicitation):
        return Consent.DECLINED
    data = outcome.data
    if isinstance(data, Consent):
        return data
    return Consent.GIVEN if isinstance(data, RunCell) and data.run else Consent.DECLINED


class Questions(Protocol):
    """Who answers the questions asked while one tool call runs."""

    def cannot_ask(self) -> str | None:
        """Why nobody can be asked (None: questions are put to the client's user)."""
        ...

    async def approve(self, code: str) -> bool: ...

    async def confirm(self, question: str) -> bool: ...


@dataclass
class NobodyToAsk:
    """No client to ask: every question is answered no."""

    reason: str = "nobody can be asked"

    def cannot_ask(self) -> str | None:
        return self.reason

    async def approve(self, code: str) -> bool:
        return False

    async def confirm(self, question: str) -> bool:
        return False


@dataclass
class ClientQuestions:
    """The questions asked while one request runs, put to its client (`elicitation/create`)."""

    context: Context[Any, Any]

    def cannot_ask(self) -> str | None:
        if not declares_elicitation(self.context):
            return NO_ELICITATION
        version = self.context.protocol_version
        if version is not None and is_version_at_least(version, NO_BACK_CHANNEL_VERSION):
            return NOT_MID_CALL.format(version=version)
        return None

    async def approve(self, code: str) -> bool:
        """The client's user let *code* run (declined, cancelled or unanswerable: no)."""
        answer = await self._ask(approval_message(code), RunCell)
        return isinstance(answer, RunCell) and answer.run

    async def confirm(self, question: str) -> bool:
        answer = await self._ask(printable(question), Confirm)
        return isinstance(answer, Confirm) and answer.yes

    async def _ask(self, message: str, schema: type[BaseModel]) -> BaseModel | None:
        """The accepted form, or None (declined, cancelled, not askable, malformed)."""
        if self.cannot_ask() is not None:
            return None
        try:
            result = await self.context.elicit(message, schema)
        except (ValueError, MCPError):  # content that does not fit the form; no back-channel
            return None
        return result.data if isinstance(result, AcceptedElicitation) else None
