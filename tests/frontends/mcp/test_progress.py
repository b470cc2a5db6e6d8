"""`ProgressTeller`: each message told once, with a progress that always increases, and a
heartbeat repeating the last one while nothing else is told (a long cell)."""

from __future__ import annotations

import asyncio

from cave_tui.frontends.mcp.progress import ProgressTeller


async def test_steps_and_heartbeats_are_told_in_increasing_order() -> None:
    told: list[tuple[float, str | None]] = []

    async def report(progress: float, total: float | None, message: str | None) -> None:
        told.append((progress, message))

    async with ProgressTeller(report, heartbeat=0.05).beating() as teller:
        await teller.tell("step 1: running cell 1\x1b[31m")
        await asyncio.sleep(0.5)  # a long cell: heartbeats
    count = len(told)
    await asyncio.sleep(0.2)
    assert len(told) == count  # the heartbeat ended with the block
    assert told[0] == (1, "step 1: running cell 1")  # printable, one line
    assert count >= 3
    assert [p for p, _ in told] == list(range(1, count + 1))
    assert all((m or "").startswith("step 1: running cell 1 (") for _, m in told[1:])
