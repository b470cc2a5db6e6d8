"""A cell's output reaches its log entry however the entry's mounting interleaves with it.

Issue 31.10, the flaky "sum is 3" (test_e2e_input.py): under load a user cell's streamed
output and its outcome came while its new entry was still being mounted. Textual ran the
entry's `on_mount`, then, not yet calling it mounted, waited for the streamed output's
widget to mount; the outcome, arriving in that wait, was put aside for an `on_mount` that
had already run, and the streamed line was removed for it: "ok", and no output shown.
Here the two arrive at every point of the entry's mounting, one event-loop turn apart.
"""

from __future__ import annotations

import asyncio

from textual.app import App

from cave_tui.frontends.tui.widgets.steplog import FoldedOutput, StepEntry, StepLog

TURNS = 9  # past the loop turns an entry takes to mount in a quiet app (7 when this was written)


class LogOnly(App[None]):
    def compose(self):
        yield StepLog(id="log")


async def _turns(n: int) -> None:
    for _ in range(n):
        await asyncio.sleep(0)  # one turn of the event loop: the entry's task goes on


def _shown(entry: StepEntry) -> list[str]:
    return [out.full for out in entry.query(FoldedOutput)]


async def test_output_and_outcome_at_any_point_of_the_entrys_mounting_are_shown():
    app = LogOnly()
    async with app.run_test(size=(80, 24)):
        log = app.query_one(StepLog)
        lost = []
        for before_output in range(TURNS):
            for before_outcome in range(TURNS):
                log.clear()
                entry = log.add_code(0, "user", "a = 1\nb = a + 1\nprint('sum is', a + b)")
                await _turns(before_output)
                entry.add_output("sum is 3\n")  # streamed while the cell runs
                await _turns(before_outcome)
                entry.finish("ok", output="sum is 3\n", changed=["a", "b"])
                entry.add_note("a note after it")
                await _turns(30)  # the entry and what it mounts are mounted by then
                assert entry.is_mounted and entry.outcome == "ok"
                kinds = [type(child).__name__ for child in entry.children]
                if _shown(entry) != ["sum is 3"] or kinds[-2:] != ["FoldedOutput", "Static"]:
                    lost.append((before_output, before_outcome, kinds))
        assert not lost, lost


async def test_an_outcome_before_the_entry_is_composed_goes_under_its_code():
    app = LogOnly()
    async with app.run_test(size=(80, 24)) as pilot:
        log = app.query_one(StepLog)
        entry = log.add_code(0, "user", "print('x')")
        entry.add_output("x\n")  # before the entry composed its header and code
        entry.finish("ok", output="x\n")
        await pilot.pause()
        await pilot.pause()
        assert list(entry.children) == [entry.header, entry.code_view, *entry.query(FoldedOutput)]
        assert _shown(entry) == ["x"]
