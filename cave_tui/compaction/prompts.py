"""Upstream 0.8's `cave_agent.compaction.prompts`: `COMPACT_SYSTEM_PROMPT`, the system
message of every summary request cave's compactor sends (cave's summariser prompt, not
0.8's wording), so a model can tell a summary call from a turn of the run."""

from __future__ import annotations

from cave_tui.agent.summarizer import SUMMARY_SYSTEM

COMPACT_SYSTEM_PROMPT = SUMMARY_SYSTEM

__all__ = ["COMPACT_SYSTEM_PROMPT"]
