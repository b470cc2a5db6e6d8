"""Upstream 0.8's `cave_agent.compaction.prompts.COMPACT_SYSTEM_PROMPT`: the system
message of every summary request, so a 0.8 model can tell a summary call from a turn."""

from __future__ import annotations

from cave_tui.compaction import Compactor
from cave_tui.compaction.prompts import COMPACT_SYSTEM_PROMPT
from cave_tui.messages import SystemMessage, UserMessage
from cave_tui.models import ScriptedModel


async def test_a_summary_request_opens_with_the_compaction_prompt() -> None:
    model = ScriptedModel(["<summary>earlier turns summarised</summary>"] * 3)
    history = [SystemMessage("sys")] + [UserMessage(f"turn {i} " + "x " * 400) for i in range(12)]

    out = await Compactor(model, context_window=5000).recover_from_overflow(history)

    assert model.requests, "no summary was asked for"
    assert all(request[0]["content"] == COMPACT_SYSTEM_PROMPT for request in model.requests)
    assert isinstance(out[0], SystemMessage) and len(out) < len(history)
    assert any("summarised" in str(m["content"]) for m in out)
