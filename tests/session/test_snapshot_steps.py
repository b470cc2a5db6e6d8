"""Per-step snapshots (issue 30): incremental, bounded, cancellable, off the turn's path.

Through the recorder with a scripted agent on the in-process runtime; what a snapshot did
is counted (digests taken, values read), never timed, but for the turn not waiting.
"""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest

from cave_tui.agent import events as ev
from cave_tui.dataio import checkpoint as checkpoint_module
from cave_tui.dataio.checkpoint import SnapshotBounds
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.shipped import persist
from cave_tui.session import SessionRecorder, read_session, resume_session
from tests.helpers import slow_pickle
from tests.session.helpers import code, scripted_agent

MANY = 2000
MAKE_MANY = "\n".join(f"v{i} = [{i}]" for i in range(MANY))
SOME = 300
MAKE_SOME = "\n".join(f"v{i} = [{i}]" for i in range(SOME))
NEW_FILE = re.compile(r"^v[0-9]+\.2\.")  # a file of the second snapshot


class Counted:
    """What each snapshot (`checkpoint_namespace` call) looked at: digests and reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, runtime: IPythonRuntime) -> None:
        self.calls: list[dict] = []
        self._digests = 0
        self._read: list[str] = []
        digest, retrieve = persist.content_digest, runtime.retrieve
        checkpoint = checkpoint_module.checkpoint_namespace

        def counted_digest(obj, limit):
            self._digests += limit > 0  # asked for (not listed without one)
            return digest(obj, limit)

        async def counted_retrieve(name):
            self._read.append(name)
            return await retrieve(name)

        async def counted_checkpoint(*args, **kwargs):
            self._digests, self._read = 0, []
            result = await checkpoint(*args, **kwargs)
            self.calls.append(
                {
                    "quick": kwargs.get("trust_reports", False),
                    "digests": self._digests,
                    "read": sorted(self._read),
                    "written": sorted(result.written),
                }
            )
            return result

        monkeypatch.setattr(persist, "content_digest", counted_digest)
        monkeypatch.setattr(runtime, "retrieve", counted_retrieve)
        monkeypatch.setattr(checkpoint_module, "checkpoint_namespace", counted_checkpoint)


async def test_a_step_snapshot_of_2000_names_reads_only_the_3_the_step_changed(
    tmp_path, monkeypatch
):
    agent = scripted_agent(
        [code("v1.append(1)\nv2.append(2)\nv3[0] = 0"), "changed"], display=False
    )
    await agent.runtime.execute(MAKE_MANY)
    counted = Counted(monkeypatch, agent.runtime)
    recorder = SessionRecorder.create(tmp_path, agent=agent, sync=False)
    await recorder.checkpoint()  # the first snapshot reads every value
    assert counted.calls[0]["digests"] == MANY and len(counted.calls[0]["read"]) == MANY
    counted.calls.clear()
    await recorder.run("change three")
    await recorder.settle()
    step = counted.calls[0]  # the step's snapshot; the turn end's one checks every value
    assert step["quick"]
    assert step["digests"] == 3 and step["read"] == ["v1", "v2", "v3"]
    assert step["written"] == ["v1", "v2", "v3"]
    await recorder.close()
    manifest = json.loads((recorder.namespace_dir / "manifest.json").read_text())
    assert len(manifest["variables"]) == MANY


async def test_names_over_the_bound_are_carried_to_the_next_snapshot_and_reported(tmp_path):
    make = "\n".join(f"w{i} = {i}" for i in range(120))
    agent = scripted_agent([code(make), "made them", code("z = 1"), "one more"], display=False)
    recorder = SessionRecorder.create(
        tmp_path, agent=agent, bounds=SnapshotBounds(names=50), sync=False
    )
    await recorder.run("make them")
    await recorder.settle()
    records = read_session(recorder.dir).records
    snapshots = [r for r in records if r["type"] == "snapshot"]
    assert [len(r["written"]) for r in snapshots] == [50, 50]  # the step's, the turn end's
    assert len(snapshots[0]["deferred"]) == 70 and len(snapshots[1]["deferred"]) == 20
    manifest = json.loads((recorder.namespace_dir / "manifest.json").read_text())
    waiting = {s["name"] for s in manifest["skipped"] if s["cause"] == "deferred"}
    assert waiting == set(snapshots[1]["deferred"])
    # Killed now: the resume names each value the bound left out, with why.
    recorder.close_now("terminated")
    fresh = scripted_agent([code("pass"), "ok"], display=False)
    result = await resume_session(recorder.dir, fresh)
    missing = {n["name"]: n["reason"] for n in result.not_restored}
    assert set(missing) == waiting
    assert all("over the snapshot's bound of 50 names" in why for why in missing.values())
    # The next snapshots read the carried names first: none waits for ever.
    await result.recorder.run("go on")
    await result.recorder.close()
    manifest = json.loads((recorder.namespace_dir / "manifest.json").read_text())
    assert {e["name"] for e in manifest["variables"]} >= {f"w{i}" for i in range(120)} - waiting
    assert not [s for s in manifest["skipped"] if s["cause"] == "deferred"]


async def test_a_cancelled_snapshot_leaves_the_previous_one_whole_and_loadable(tmp_path):
    slow_pickle.RELEASE.clear()
    agent = scripted_agent([code(MAKE_SOME), "made them"], display=False)
    recorder = SessionRecorder.create(tmp_path, agent=agent, sync=False)
    await recorder.run("make them")
    await recorder.settle()
    manifest = recorder.namespace_dir / "manifest.json"
    before = manifest.read_bytes()
    files = sorted(p.name for p in recorder.namespace_dir.iterdir())
    # Every value changes, and one of them pickles slowly: the snapshot is cut mid-way.
    await agent.runtime.execute(
        "from tests.helpers.slow_pickle import SlowPickle\n"
        + "\n".join(f"v{i} = [{i}, 'new']" for i in range(SOME))
        + f"\nv{SOME - 1} = SlowPickle()"
    )
    recorder.mark_changed(*(f"v{i}" for i in range(SOME)))
    recorder.snapshot_soon()
    try:
        deadline = time.monotonic() + 20
        while not any(NEW_FILE.match(p.name) for p in recorder.namespace_dir.iterdir()):
            assert time.monotonic() < deadline, "the snapshot wrote nothing"
            await asyncio.sleep(0.01)
        assert recorder.snapshotting
        cancelling = asyncio.create_task(recorder.cancel_snapshot())
        await asyncio.sleep(0.2)
    finally:
        slow_pickle.RELEASE.set()  # the write under way returns (interrupted)
    await cancelling
    assert not recorder.snapshotting
    assert manifest.read_bytes() == before
    assert sorted(p.name for p in recorder.namespace_dir.iterdir()) == files
    recorder.close_now("terminated")
    restored = IPythonRuntime()
    result = await resume_session(recorder.dir, scripted_agent([], display=False), restored)
    assert len(result.restored) == SOME and not result.not_restored
    assert (await restored.retrieve("v7")) == [7]  # the previous snapshot's value
    await result.recorder.close()


async def test_a_slow_snapshot_does_not_hold_up_the_next_step(tmp_path):
    slow_pickle.RELEASE.clear()
    agent = scripted_agent([code("a = 1"), code("b = 2"), "done"], display=False)
    await agent.runtime.execute(
        "from tests.helpers.slow_pickle import SlowPickle\nslow = SlowPickle()"
    )
    recorder = SessionRecorder.create(tmp_path, agent=agent, sync=False)
    outputs: list[float] = []
    try:
        async for event in recorder.stream_events("two steps"):
            if event.type is ev.EventType.EXECUTION_OUTPUT:
                outputs.append(time.monotonic())
        assert len(outputs) == 2
        # Pickling `slow` for the first step's snapshot waits WAIT (8) s: the step after
        # it ran long before (generous for a loaded machine).
        assert outputs[1] - outputs[0] < slow_pickle.WAIT / 2
        assert recorder.snapshotting
    finally:
        slow_pickle.RELEASE.set()
    await recorder.close()  # the exit waits for the snapshot and takes the last one whole
    manifest = json.loads((recorder.namespace_dir / "manifest.json").read_text())
    assert {e["name"] for e in manifest["variables"]} >= {"a", "b", "slow"}


def test_a_change_made_while_a_background_snapshot_read_the_values_is_said_to_be_uncertain():
    """A snapshot holds every record up to its `log_seq`; those logged before its `read_seq`
    ran while it read the values (it may hold them or not); later ones it does not hold."""
    from cave_tui.session.since_snapshot import changes_after, compare, read_mark

    records = [
        {"seq": 5, "type": "execution_output", "turn": 1, "step": 1, "changed": ["x"]},
        {"seq": 7, "type": "execution_output", "turn": 1, "step": 2, "changed": ["x", "y"]},
        {"seq": 9, "type": "execution_output", "turn": 1, "step": 3, "changed": ["z"]},
    ]
    after = changes_after(records, 5, read_mark({"log_seq": 5, "read_seq": 8}))
    stale = {s.name: s for s in compare(after, {"x", "z"}, set(), {})}
    assert stale["x"].describe() == (
        "x: restored a value the last snapshot read while turn 1 step 2 ran: "
        "it may be from before or after that change"
    )
    assert stale["z"].describe().startswith("z: restored the value from before turn 1 step 3")
    assert (
        stale["y"].describe() == "y: not restored; turn 1 step 2 bound it after the last snapshot"
    )


async def test_a_changed_name_over_the_bound_keeps_its_older_value_and_resume_says_so(tmp_path):
    make = "\n".join(f"w{i} = [{i}]" for i in range(120))
    change = "\n".join(f"w{i}.append(0)" for i in range(60))
    agent = scripted_agent([code(change), "changed"], display=False)
    await agent.runtime.execute(make)
    recorder = SessionRecorder.create(
        tmp_path, agent=agent, bounds=SnapshotBounds(names=50), sync=False
    )
    await recorder.checkpoint()  # every value, unbounded
    recorder.snapshot_every = "step"
    events = recorder.stream_events("change 60")
    stepped = False
    async for event in events:
        if stepped:
            break  # killed after the step (its snapshot asked for): no turn end
        stepped = event.type is ev.EventType.EXECUTION_OUTPUT
    await recorder.settle()
    manifest = json.loads((recorder.namespace_dir / "manifest.json").read_text())
    behind = {b["name"] for b in manifest["behind"]}
    assert len(behind) == 10 and behind <= {f"w{i}" for i in range(60)}
    assert {e["name"] for e in manifest["variables"]} >= behind  # the older values stand
    recorder.close_now("terminated")
    restored = IPythonRuntime()
    result = await resume_session(recorder.dir, scripted_agent([], display=False), restored)
    said = " ".join(result.differences())
    for name in behind:
        assert f"{name}: restored the value from before a step the snapshot had not" in said
        assert len(await restored.retrieve(name)) == 1  # the older value, as said
    await result.recorder.close()
    await events.aclose()


async def test_a_background_snapshot_never_re_creates_a_deleted_session_folder(tmp_path):
    """A cell may be deleting the session folder while a step's snapshot runs beside it: the
    snapshot leaves the folder gone (re-creating it made the cell's rmtree fail); the next
    step boundary re-creates it with every record, and the next snapshot saves it all."""
    import shutil

    agent = scripted_agent([code("a = 1"), "made a"], display=False)
    recorder = SessionRecorder.create(tmp_path, agent=agent, sync=False)
    await recorder.run("make a")
    await recorder.settle()
    shutil.rmtree(recorder.dir)
    recorder.mark_changed("a")
    recorder.snapshot_soon()
    await recorder.settle()
    assert not recorder.dir.exists()
    assert not recorder.warnings  # nothing failed: it waits for the next step
    recorder.record({"type": "notice", "turn": recorder.turn, "content": "step"}, sync=True)
    assert recorder.dir.is_dir() and len(recorder.warnings) == 1  # re-created, told once
    assert await recorder.checkpoint(full=True) is not None
    await recorder.close()
    data = read_session(recorder.dir)
    assert [r["type"] for r in data.records][:2] == ["session", "message"]
    assert (recorder.namespace_dir / "manifest.json").exists()
