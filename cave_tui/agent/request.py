"""`AgentPrompt`: what `CaveAgent` sends the model, built from its settings and history.

The system prompt is stable across a session (prompt caches), the live namespace and
the policies' tips go last, in the newest user message, never into history.
"""

from __future__ import annotations

from typing import Any

from cave_tui.agent.conversation import Conversation
from cave_tui.agent.messages import merge_consecutive
from cave_tui.agent.prompt import (
    FINAL_ANSWER_INSTRUCTIONS,
    SKILLS_HEADER,
    TIMEOUT_NOTE,
    describe_namespace,
    legacy_sections,
    render_template,
    uses_inline_namespace,
)
from cave_tui.agent.turn import Turn
from cave_tui.models.base import Message
from cave_tui.runtime.base import Runtime
from cave_tui.runtime.shipped.summary import VarInfo


class AgentPrompt:
    """The request-building half of `CaveAgent` (its attributes are set by `CaveAgent`)."""

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
    _turn: Turn | None

    @property
    def messages(self) -> list[Message]:
        """System prompt plus history, as the provider would see it (without the namespace)."""
        return [{"role": "system", "content": self.system_prompt()}, *self.conversation]

    @messages.setter
    def messages(self, messages: list[Any]) -> None:
        """Replace the conversation (a leading system message is rebuilt, not kept)."""
        self.conversation.replace(messages)

    def build_system_prompt(self) -> str:
        """The system prompt of the next model call (upstream's name for `system_prompt()`)."""
        return self.system_prompt()

    def system_prompt(self, legacy: dict[str, str] | None = None) -> str:
        system_instructions = render_template(
            self.system_instructions,
            {
                "python_block_identifier": self.python_block_identifier,
                "final_answer": FINAL_ANSWER_INSTRUCTIONS if self.final_answer else "",
            },
        )
        values: dict[str, Any] = {
            "instructions": self.instructions,
            "system_instructions": system_instructions,
            "python_block_identifier": self.python_block_identifier,
            "skills": self._skills_text(),
            "security": self._security_text(),
        }
        values.update(legacy or {"functions": "", "variables": "", "types": ""})
        prompt = render_template(self.system_prompt_template, values).strip()
        if self.max_exec_timeout is not None:
            prompt += "\n\n" + TIMEOUT_NOTE.format(seconds=f"{self.max_exec_timeout:g}")
        return prompt

    def _skills_text(self) -> str:
        if not self.skills:
            return ""
        lines = [f"- {s.name}: {s.description}" for s in self.skills]
        return SKILLS_HEADER + "\n" + "\n".join(lines)

    def _security_text(self) -> str:
        checker = getattr(self.runtime, "security_checker", None)
        line = getattr(checker, "prompt_line", None)
        if callable(line):
            line = line()
        return f"\n\n{line}" if line else ""

    async def namespace_text(self) -> str:
        return self._describe(await self.runtime.namespace_summary())

    def _describe(self, rows: list[VarInfo]) -> str:
        kwargs = {"budget": self.namespace_budget} if self.namespace_budget else {}
        return describe_namespace(rows, **kwargs)

    async def build_request(self) -> list[Message]:
        """The messages for the next model call: stable prefix first, namespace last."""
        turn = self._turn
        if uses_inline_namespace(self.system_prompt_template):
            rows = await self._rows()
            system = self.system_prompt(legacy_sections(rows))
            return merge_consecutive([{"role": "system", "content": system}, *self.conversation])
        request = merge_consecutive(
            [{"role": "system", "content": self.system_prompt()}, *self.conversation]
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
        if self._turn is not None:
            return await self._turn.rows()
        return await self.runtime.namespace_summary()
