"""Fixtures for the app tests: isolated config/data dirs, an app factory, settle helpers.

No fixed sleeps: helpers wait for workers and for conditions, with a deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cave_tui.app.config import Config
from cave_tui.app.services import AppServices
from cave_tui.models import ScriptedModel

TWO_STEP_FRAME = [
    "Let me build the frame.\n\n```python\nimport pandas as pd\n"
    "df = pd.DataFrame({'species': ['Adelie', 'Gentoo', 'Chinstrap'], "
    "'mass': [3700, 5076, 3733]})\nprint(df.shape)\n```",
    "```python\nheaviest = df.loc[df['mass'].idxmax(), 'species']\nheaviest\n```",
    "**Gentoo** penguins are the heaviest (5,076 g). The table is in `df`.",
]


def make_app(
    replies: list[Any] | None = None,
    *,
    config: Config | None = None,
    runtime: Any = None,
    history: Path | None = None,
    persist: bool = False,
) -> Any:
    """A CaveApp with a ScriptedModel (or no model), stable rendering, no real clock.

    Dialogs take an answer key as soon as they are open (`answer_grace=0`), as the tests
    that press one expect; test_dialog_keys.py tests the grace itself.
    """
    from cave_tui.frontends.tui.app import CaveApp

    model = ScriptedModel(replies) if replies is not None else None
    services = AppServices(config or Config(kernel=False), model=model, runtime=runtime)
    return CaveApp(
        services,
        animate=False,
        clock=lambda: 0.0,
        history_file=history,
        persist_settings=persist,
        start_delay=0,
        answer_grace=0,
    )


async def settle(pilot: Any, rounds: int = 4) -> None:
    """Let workers finish and the messages they posted be handled (a few rounds)."""
    app = pilot.app
    for _ in range(rounds):
        # Cancelled or failed workers count as finished here (tests check the outcome).
        await asyncio.gather(*(w.wait() for w in list(app.workers)), return_exceptions=True)
        await pilot.pause()


async def wait_for(pilot: Any, condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Process the app's messages until *condition* holds; fail after *timeout* seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met before the deadline")
        await pilot.pause(0.01)


async def submit(pilot: Any, text: str) -> None:
    """Put *text* in the input and send it (the Enter key's action), then settle.

    Key tests press Enter for real; this skips the key dispatch's idle wait.
    """
    pilot.app.prompt.text = text
    pilot.app.prompt.action_submit()
    await settle(pilot)


def chat_text(app: Any) -> str:
    """Every notice, user message and reply in the chat, as text."""
    from cave_tui.frontends.tui.widgets.chat import AgentMessage, Answer, Notice, UserMessage

    out = []
    for child in app.chat.children:
        if isinstance(child, AgentMessage):
            out.append(child.text)
            if child.status.display:
                out.append(str(child.status.render()))
        elif isinstance(child, Notice | UserMessage | Answer):
            out.append(child.text)
    return "\n".join(out)


async def run_async(coro: Any) -> Any:
    return await asyncio.ensure_future(coro)
