"""Asyncio task helpers shared by the core and the front ends."""

from __future__ import annotations

import asyncio
from typing import Any


async def cancel_and_wait(task: asyncio.Future[Any]) -> None:
    """Cancel *task* and wait for it to end; its own cancellation is not raised (an error it
    ended with is). A cancel of the caller that lands meanwhile is raised, never swallowed."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise


def abandon(task: asyncio.Future[Any]) -> None:
    """Give up on *task*: cancelled if still running (a thread it waits for ends on its own),
    and how it ended, an error included, is never reported."""
    task.add_done_callback(_retrieve)
    task.cancel()


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
