"""Tier 2 of compaction: summarise older messages with the model.

The prompt asks for an `<analysis>` block (a scratchpad, discarded) then a
`<summary>` block (kept). A region too large for one request is folded in
chunks: each chunk updates the running summary. A reply that was cut
(`finish_reason` not "stop"), is empty, or has no usable summary is a failure,
so a truncated summary never silently replaces the turns it was meant to carry.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from cave_tui.agent.observation import cut_middle
from cave_tui.models.adapt import stream_items
from cave_tui.models.base import Completion, Message, Model, ModelError, TextDelta, Usage
from cave_tui.models.tokens import count_text

SUMMARY_SYSTEM = """\
You summarise a conversation between a user and an AI data analyst who works by running \
Python in a persistent session, so the analyst can carry on without the original messages.

Reply with exactly two blocks and nothing else:
<analysis>
Your notes: go through the conversation in order: what was asked, what code ran, what it \
showed, what failed and why. This block is thrown away.
</analysis>
<summary>
The summary that replaces the conversation. Cover, skipping what does not apply:
1. The user's requests in order; quote the latest one verbatim.
2. Results so far: numbers, findings, conclusions.
3. Variables, functions and files the work created or relies on (names and what they hold).
4. Errors hit and how they were fixed; approaches that did not work.
5. Skills activated (by name) and their instructions that still matter.
6. What remains to do, and the next step.
Be specific (names, values). No code blocks.
</summary>"""

NEW_PROMPT = "The conversation to summarise:\n\n<conversation>\n{transcript}\n</conversation>"

UPDATE_PROMPT = """\
A summary of the earlier part of the conversation:
<existing_summary>
{prior}
</existing_summary>

What happened after it:
<conversation>
{transcript}
</conversation>

Write the updated summary of the whole conversation: keep every fact of the existing \
summary that still matters and add what the new part brought."""

SUMMARY_MESSAGE = """\
<conversation-summary>
The earlier part of this conversation was compacted into this summary. The Python session \
was not touched: every object listed under Namespace is still live.

{summary}
</conversation-summary>"""

SUMMARY_ACK = "Understood. I will continue from this summary, using the live objects."

MAX_ENTRY_CHARS = 4000  # one message's share of a transcript
_SUMMARY = re.compile(r"<summary>(.*?)(?:</summary>|\Z)", re.DOTALL)
_ANALYSIS = re.compile(r"<analysis>.*?(?:</analysis>|\Z)", re.DOTALL)


class SummaryFailedError(RuntimeError):
    """The model gave no usable summary (error, cut reply, empty or malformed)."""


@dataclass
class Entry:
    """One message as the summariser sees it."""

    label: str  # "user", "assistant", "cell output"
    content: str

    def render(self) -> str:
        return f"[{self.label}]\n{cut_middle(self.content.strip(), MAX_ENTRY_CHARS)}"


def extract_summary(text: str) -> str:
    """The `<summary>` block; without tags, the text minus any `<analysis>` block."""
    match = _SUMMARY.search(text)
    if match:
        return match.group(1).strip()
    return _ANALYSIS.sub("", text).strip()


def chunk_entries(entries: list[Entry], budget: int) -> list[list[Entry]]:
    """Split *entries* into runs whose rendered transcripts fit *budget* tokens."""
    chunks: list[list[Entry]] = []
    current: list[Entry] = []
    used = 0
    for entry in entries:
        tokens = count_text(entry.render()) + 2
        if tokens > budget:  # one huge message: keep its head and tail
            chars = max(200, budget * 3)
            entry = Entry(entry.label, cut_middle(entry.content, chars))
            tokens = count_text(entry.render()) + 2
        if current and used + tokens > budget:
            chunks.append(current)
            current, used = [], 0
        current.append(entry)
        used += tokens
    if current:
        chunks.append(current)
    return chunks


class Summarizer:
    """Calls *model* to fold entries into a summary; reports each call's usage."""

    def __init__(self, model: Model, on_usage: Callable[[Usage, bool], None]) -> None:
        self.model = model
        self.on_usage = on_usage

    async def summarise(self, entries: list[Entry], prior: str | None, budget: int) -> str:
        if not entries:
            if prior:
                return prior
            raise SummaryFailedError("nothing to summarise")
        summary = prior
        for chunk in chunk_entries(entries, budget):
            summary = await self._one(chunk, summary)
        assert summary is not None
        return summary

    async def _one(self, chunk: list[Entry], prior: str | None) -> str:
        transcript = "\n\n".join(e.render() for e in chunk)
        user = (
            UPDATE_PROMPT.format(prior=prior, transcript=transcript)
            if prior
            else NEW_PROMPT.format(transcript=transcript)
        )
        request: list[Message] = [
            {"role": "system", "content": SUMMARY_SYSTEM},
            {"role": "user", "content": user},
        ]
        parts: list[str] = []
        completion: Completion | None = None
        async for item in stream_items(self.model, request):
            if isinstance(item, TextDelta):
                parts.append(item.text)
            elif isinstance(item, Completion):
                completion = item
                self.on_usage(item.usage, item.usage_reported)
            elif getattr(item, "discard_partial", False):
                parts.clear()
        if completion is None:
            raise ModelError("the summary stream ended without a completion")
        if completion.finish_reason not in (None, "stop"):
            raise SummaryFailedError(f"summary reply was cut ({completion.finish_reason})")
        summary = extract_summary("".join(parts))
        if not summary:
            raise SummaryFailedError("the model returned an empty summary")
        return summary
