"""Upstream's `cave_agent.display`: print an event stream with Rich as it passes.

Cave's renderer is `cave_tui.agent.display.RichDisplay` (what `display=True` uses);
these are upstream's three functions over it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any

from rich.console import Console
from rich.text import Text

from cave_tui.agent.display import RichDisplay
from cave_tui.agent.events import Event
from cave_tui.printable import printable

console = Console(highlight=False)


async def with_display(
    events: AsyncIterable[Event], context: Any = None
) -> AsyncGenerator[Event, None]:
    """Yield every event of *events* unchanged, printing each one on the way.

    *context*, if given, is anything with a `token_usage` or `usage` attribute
    (prompt/completion/total tokens) for the closing line.
    """
    display = RichDisplay(console)
    start = time.monotonic()
    async for event in events:
        display.render(event)
        yield event
    display.flush()
    details = [f"{time.monotonic() - start:.1f}s"]
    usage: Any = getattr(context, "token_usage", None) or getattr(context, "usage", None)
    total = getattr(usage, "total_tokens", 0)
    if total:
        details.append(
            f"{total:,} tokens (prompt: {usage.prompt_tokens:,}, "
            f"completion: {usage.completion_tokens:,})"
        )
    console.print(Text("done  " + " · ".join(details), style="dim"))


async def render_events(events: AsyncIterable[Event], context: Any = None) -> None:
    """Print every event of *events* (consumes the stream)."""
    async for _ in with_display(events, context):
        pass


def render_user_prompt(text: str) -> None:
    """Print the user's prompt the way the events' display shows it."""
    console.print()
    console.print(Text.assemble(("> ", "bold blue"), (printable(text), "")))
    console.print()


__all__ = ["render_events", "render_user_prompt", "with_display"]
