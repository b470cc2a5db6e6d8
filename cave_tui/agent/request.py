"""`PromptBuilder`: what `CaveAgent` sends the model, built from its settings and conversation.

The system prompt is stable across a session (prompt caches), the live namespace and
the policies' tips go last, in the newest user message, never into history.
"""

from __future__ import annotations

from typing import Any, Protocol

from cave_tui.agent.conversation import Conversation
from cave_tui.agent.messages import merge_consecutive, typed_history
from cave_tui.agent.policies.base import AgentPolicy
from cave_tui.agent.prompt import (
    DEFAULT_SYSTEM_INSTRUCTIONS,
    FINAL_ANSWER_INSTRUCTIONS,
    SKILLS_HEADER,
    TIMEOUT_NOTE,
    describe_namespace,
    legacy_sections,
    render_template,
    uses_inline_namespace,
)
from cave_tui.agent.turn import Turn
from cave_tui.messages import SystemMessage
from cave_tui.models.base import Message
from cave_tui.runtime.base import Runtime
from cave_tui.runtime.shipped.summary import VarInfo


class PromptSettings(Protocol):
    """What the builder reads from its agent, live (a user may change a setting between turns)."""

    runtime: Runtime
    conversation: Conversation
    instructions: str
    system_instructions: str
    system_prompt_template: str
    python_block_identifier: str
    final_answer: bool
    max_exec_timeout: float | None
    namespace_budget: int | None
    skills: list[Any]

    @property
    def policies(self) -> list[AgentPolicy]:
        """The agent's policies (one may supply the system rules: `system_rules`)."""

    @property
    def turn(self) -> Turn | None:
        """The turn in progress, if any (its namespace summary is shared with the policies)."""


class PromptBuilder:
    """Builds `CaveAgent`'s system prompt and requests from *settings* (the agent itself)."""

    def __init__(self, settings: PromptSettings) -> None:
        self.settings = settings

    def messages(self) -> list[Message]:
        """System prompt plus history, as the provider would see it (without the namespace),
        as message objects (`cave_tui.messages`)."""
        history = typed_history(self.settings.conversation, self.settings.python_block_identifier)
        return [SystemMessage(self.system_prompt()), *history]

    def system_prompt(self, legacy: dict[str, str] | None = None) -> str:
        """The system prompt; *legacy* fills an upstream-style template's namespace sections."""
        settings = self.settings
        system_instructions = render_template(
            self.system_rules(),
            {
                "python_block_identifier": settings.python_block_identifier,
                "final_answer": FINAL_ANSWER_INSTRUCTIONS if settings.final_answer else "",
            },
        )
        values: dict[str, Any] = {
            "instructions": settings.instructions,
            "system_instructions": system_instructions,
            "python_block_identifier": settings.python_block_identifier,
            "skills": self._skills_text(),
            "security": self._security_text(),
        }
        values.update(legacy or {"functions": "", "variables": "", "types": ""})
        prompt = render_template(settings.system_prompt_template, values).strip()
        if settings.max_exec_timeout is not None:
            prompt += "\n\n" + TIMEOUT_NOTE.format(seconds=f"{settings.max_exec_timeout:g}")
        return prompt

    def system_rules(self) -> str:
        """The rules of the system prompt: the agent's, unless they are the default and a
        policy supplies its own (`system_instructions`, e.g. `short_prompt`)."""
        rules = self.settings.system_instructions
        if rules != DEFAULT_SYSTEM_INSTRUCTIONS:
            return rules  # the user's own rules win
        for policy in self.settings.policies:
            own = getattr(policy, "system_instructions", None)
            if isinstance(own, str) and own:
                return own
        return rules

    def _skills_text(self) -> str:
        skills = self.settings.skills
        if not skills:
            return ""
        lines = [f"- {s.name}: {s.description}" for s in skills]
        return SKILLS_HEADER + "\n" + "\n".join(lines)

    def _security_text(self) -> str:
        checker = getattr(self.settings.runtime, "security_checker", None)
        line = getattr(checker, "prompt_line", None)
        if callable(line):
            line = line()
        return f"\n\n{line}" if line else ""

    async def namespace_text(self) -> str:
        """The live namespace as the next request describes it."""
        return self._describe(await self.settings.runtime.namespace_summary())

    def _describe(self, rows: list[VarInfo]) -> str:
        budget = self.settings.namespace_budget
        return describe_namespace(rows, budget) if budget else describe_namespace(rows)

    async def build_request(self) -> list[Message]:
        """The messages for the next model call: stable prefix first, namespace last."""
        turn = self.settings.turn
        conversation = self.settings.conversation
        if uses_inline_namespace(self.settings.system_prompt_template):
            rows = await self._rows()
            system = self.system_prompt(legacy_sections(rows))
            return merge_consecutive([{"role": "system", "content": system}, *conversation])
        request = merge_consecutive(
            [{"role": "system", "content": self.system_prompt()}, *conversation]
        )
        namespace = self._describe(await self._rows())
        if turn is not None:  # the policies' tips for this call (the loop asked them)
            namespace = "\n".join([namespace, *turn.tips])
        last = request[-1]
        if last["role"] == "user":
            request[-1] = {**last, "content": f"{namespace}\n\n{last['content']}"}
        else:
            request.append({"role": "user", "content": namespace})
        return request

    async def _rows(self) -> list[VarInfo]:
        turn = self.settings.turn
        return await (
            turn.rows() if turn is not None else self.settings.runtime.namespace_summary()
        )
