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


async def test_a_cancel_that_lands_as_the_heartbeat_stops_is_not_swallowed() -> None:
    """The request's task is cancelled (the client's `notifications/cancelled`) while the
    block's exit waits for its heartbeat to stop: the task ends cancelled, as asked, and
    goes on to nothing after its block."""
    import asyncio

    from cave_tui.frontends.mcp.progress import ProgressTeller

    async def report(progress: float, total: float | None, message: str | None) -> None:
        await asyncio.sleep(0)

    after: list[str] = []

    async def request() -> None:
        async with ProgressTeller(report, heartbeat=0.01).beating():
            await asyncio.sleep(0)
        after.append("the block ended")
        await asyncio.sleep(0)  # where a swallowed cancel lets the request go on
        after.append("went on after the cancel")

    for turns in range(8):  # the cancel lands at another point of the exit each time
        after.clear()
        task = asyncio.create_task(request())
        for _ in range(turns):
            await asyncio.sleep(0)
        if not task.cancel():
            continue  # it had ended: nothing to cancel
        try:
            await task
        except asyncio.CancelledError:
            pass
        assert task.cancelled(), after
        assert "went on after the cancel" not in after
