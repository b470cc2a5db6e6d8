"""The recorder writes a complete, flushed log, snapshots, and a meta.json."""

from __future__ import annotations

import json

import pytest

from cave_tui.session import (
    EventLog,
    SessionError,
    SessionRecorder,
    SessionStore,
    read_records,
    read_session,
    rebuild_history,
)
from cave_tui.session.log import LogInUseError
from tests.session.helpers import TWO_TURNS, code, scripted_agent


async def test_records_every_part_of_a_turn(tmp_path):
    agent = scripted_agent(TWO_TURNS)
    recorder = SessionRecorder.create(tmp_path, title="Make x & y!", agent=agent)
    assert recorder.dir.name.endswith("-make-x-y")
    await recorder.run("make x and y")
    await recorder.run("double it")
    await recorder.close()

    records, report = read_records(recorder.dir / "events.jsonl")
    assert not report.torn_tail and not report.bad_lines
    kinds = [r["type"] for r in records]
    for kind in (
        "session", "user", "reply", "code", "execution_output", "usage",
        "final_response", "message", "snapshot", "turn_end", "closed",
    ):  # fmt: skip
        assert kind in kinds, kind
    assert "text" not in kinds  # streamed chunks are not logged; whole replies are
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    replies = [r["text"] for r in records if r["type"] == "reply"]
    assert replies == TWO_TURNS
    outputs = [r["output"] for r in records if r["type"] == "execution_output"]
    assert outputs == ["41\n", "83\n", "[82, 84]\n"]
    assert rebuild_history(records) == agent.history

    meta = json.loads((recorder.dir / "meta.json").read_text())
    assert meta["status"] == "closed" and meta["turns"] == 2 and meta["steps"] == 3
    assert meta["model"] == "scripted" and meta["usage"]["total_tokens"] > 0
    manifest = json.loads((recorder.dir / "namespace" / "manifest.json").read_text())
    assert {e["name"] for e in manifest["variables"]} == {"x", "y", "z"}
    assert manifest["modules"] == [{"name": "pd", "module": "pandas"}]


async def test_a_snapshot_follows_every_step(tmp_path):
    agent = scripted_agent(TWO_TURNS)
    recorder = SessionRecorder.create(tmp_path, agent=agent)
    await recorder.run("make x and y")
    await recorder.close()
    records = read_session(recorder.dir).records
    # Taken in the background: a step's snapshot follows it, coalesced with a later one's
    # when the next step came first; between them they wrote each value once.
    first = next(i for i, r in enumerate(records) if r["type"] == "execution_output")
    snapshots = [(i, r) for i, r in enumerate(records) if r["type"] == "snapshot"]
    assert snapshots and snapshots[0][0] > first
    assert sorted(n for _, r in snapshots for n in r["written"]) == ["x", "y"]


async def test_torn_last_line_is_tolerated_and_cut_before_appending(tmp_path):
    agent = scripted_agent(TWO_TURNS)
    recorder = SessionRecorder.create(tmp_path, agent=agent)
    await recorder.run("make x and y")
    await recorder.close()
    path = recorder.dir / "events.jsonl"
    good = path.read_bytes()
    path.write_bytes(good + b'{"seq": 999, "type": "message", "role": "assi')  # killed mid-write
    records, report = read_records(path)
    assert report.torn_tail and records[-1]["type"] == "closed"
    log = EventLog(path)
    assert log.repaired and path.read_bytes() == good
    log.append({"type": "notice", "content": "after"})
    log.close()
    assert read_records(path)[0][-1]["content"] == "after"


async def test_a_session_is_recorded_by_one_process_at_a_time(tmp_path):
    agent = scripted_agent(TWO_TURNS)
    recorder = SessionRecorder.create(tmp_path, agent=agent)
    with pytest.raises(LogInUseError):
        EventLog(recorder.dir / "events.jsonl")
    with pytest.raises(SessionError, match="another running cave process"):
        SessionRecorder.open(recorder.dir)
    await recorder.close()
    SessionRecorder.open(recorder.dir).close_now("closed")


async def test_history_rewrites_are_recorded_as_resets(tmp_path):
    agent = scripted_agent([code("a = 1"), "ok", "second"])
    recorder = SessionRecorder.create(tmp_path, agent=agent)
    await recorder.run("first")
    agent.history[:] = [{"role": "user", "content": "[summary of earlier turns]"}]  # compaction
    await recorder.run("again")
    await recorder.close()
    records = read_session(recorder.dir).records
    assert any(r["type"] == "history_reset" for r in records)
    assert rebuild_history(records) == agent.history


async def test_store_resolves_ids_prefixes_and_last(tmp_path):
    store = SessionStore(tmp_path)
    first = SessionRecorder.create(tmp_path, title="alpha", agent=scripted_agent(["hi"]))
    await first.run("hello")
    await first.close()
    second = SessionRecorder.create(tmp_path, title="beta", agent=scripted_agent(["hi"]))
    await second.close()
    (tmp_path / "demo-bundled").mkdir()
    (tmp_path / "demo-bundled" / "events.jsonl").write_text("")
    assert store.resolve("last") == second.dir
    assert store.resolve(first.id) == first.dir
    assert store.resolve(str(first.dir)) == first.dir
    with pytest.raises(SessionError, match="no session"):
        store.resolve("nope")
    ids = [row.id for row in store.list()]
    assert first.id in ids and "demo-bundled" in ids
    assert {row.status for row in store.list() if row.id != "demo-bundled"} == {"closed"}


async def test_a_full_disk_during_a_snapshot_warns_and_the_run_goes_on(tmp_path, monkeypatch):
    import errno

    from cave_tui.dataio import save as save_module

    def enospc(obj, path, **options):
        raise OSError(errno.ENOSPC, "No space left on device")

    agent = scripted_agent(TWO_TURNS[:3])
    recorder = SessionRecorder.create(tmp_path, agent=agent)
    warnings = []
    recorder.on_warning = warnings.append
    monkeypatch.setitem(save_module.WRITERS, "json", enospc)
    assert await recorder.run("make x and y") == "completed"
    await recorder.close()
    assert warnings and "disk is full" in warnings[0]
    assert rebuild_history(read_session(recorder.dir).records) == agent.history


async def test_an_injection_whose_hash_finishes_late_keeps_its_place(tmp_path):
    import concurrent.futures
    import threading

    from cave_tui.dataio import Injection
    from cave_tui.session import recorded_turns

    agent = scripted_agent(["first answer", "second answer"])
    recorder = SessionRecorder.create(tmp_path, agent=agent)
    slow: concurrent.futures.Future[str] = concurrent.futures.Future()
    source = {"kind": "file", "path": "/data/big.npy", "format": "npy", "sha256": None}
    recorder.record_injection(Injection("big", source, "ndarray", "", sha256_future=slow))
    await recorder.run("one")  # the user's turn starts before the hash is known
    late: concurrent.futures.Future[str] = concurrent.futures.Future()
    recorder.record_injection(Injection("later", dict(source), "ndarray", "", sha256_future=late))
    slow.set_result("a" * 64)
    threading.Timer(0.2, late.set_result, ["b" * 64]).start()
    await recorder.close()  # waits for the second hash
    data = read_session(recorder.dir)
    injections = [r for r in data.records if r["type"] == "injection"]
    assert [(r["name"], r["before_turn"], r["source"]["sha256"]) for r in injections] == [
        ("big", 1, "a" * 64),
        ("later", 2, "b" * 64),
    ]
    first_user = next(i for i, r in enumerate(data.records) if r["type"] == "user")
    assert data.records.index(injections[0]) > first_user  # logged late…
    turns, trailing = recorded_turns(data)
    assert [r["name"] for r in turns[0].setup] == ["big"]  # …but replayed in its place
    assert [r["name"] for r in trailing] == ["later"]
