"""Issue 34, item 5: what `/sessions` and `cave sessions` list, newest first and bounded:
id, title, date, turns, variables (counted from the last snapshot's manifest, never
unpickled), model and status; hostile session folders list safely, with a note."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from cave_tui.session import SessionRecorder
from cave_tui.session.listing import list_sessions
from tests.session.helpers import TWO_TURNS, scripted_agent


def _folder(root: Path, name: str, meta: object | None = None, *, age: float = 0) -> Path:
    """A session folder written by hand (a one-record log, *meta* as meta.json), *age*
    seconds old."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text('{"seq": 1, "type": "session"}\n')
    if meta is not None:
        text = meta if isinstance(meta, str) else json.dumps(meta)
        (folder / "meta.json").write_text(text)
    stamp = time.time() - age
    for path in folder.iterdir():
        os.utime(path, (stamp, stamp))
    return folder


async def test_a_recorded_session_lists_its_title_turns_variables_model_and_status(tmp_path):
    root = tmp_path / "sessions"
    agent = scripted_agent(TWO_TURNS)
    session = SessionRecorder.create(root, agent=agent)
    await session.run("Make x and y")
    await session.run("double y")
    await session.close("completed")
    _folder(root, "20250101-000000-older", {"title": "Older", "turns": 1}, age=3600)

    listing = list_sessions(root)
    newest, older = listing.sessions
    assert (newest.id, newest.title, newest.turns) == (session.id, "Make x and y", 2)
    assert (newest.variables, newest.model, newest.status) == (3, "scripted", "completed")
    assert newest.note is None
    assert newest.facts() == "2 turns · 3 variables · scripted · completed"
    assert newest.when == time.strftime("%Y-%m-%d %H:%M", time.localtime(newest.updated))
    assert (older.title, older.turns, older.variables, older.status) == ("Older", 1, None, "?")
    data = newest.to_json()
    assert {k: data[k] for k in ("id", "title", "turns", "variables", "model", "status")} == {
        "id": session.id, "title": "Make x and y", "turns": 2, "variables": 3,
        "model": "scripted", "status": "completed",
    }  # fmt: skip


def test_the_listing_is_bounded_newest_first(tmp_path):
    root = tmp_path / "sessions"
    for n in range(25):
        _folder(root, f"20250101-0000{n:02d}-s{n}", {"title": f"s{n}"}, age=1000 - n)
    listing = list_sessions(root)
    assert listing.total == 25 and len(listing.sessions) == 20
    assert [r.title for r in listing.sessions[:2]] == ["s24", "s23"]
    assert len(list_sessions(root, limit=None).sessions) == 25


def test_hostile_session_folders_list_safely_with_a_note(tmp_path):
    root = tmp_path / "sessions"
    _folder(root, "20250101-000001-bad-json", "{not json")
    _folder(root, "20250101-000002-huge", json.dumps({"title": "x" * (2 << 20)}))
    fifo = _folder(root, "20250101-000003-fifo")
    os.mkfifo(fifo / "meta.json")
    _folder(root, "20250101-000004-list", "[1, 2]")
    _folder(
        root,
        "20250101-000005-types",
        {"title": "\x1b]52;c;aGk=\x07Sales\x1b[2J [red]x[/]\u202e", "turns": "many", "model": 3},
    )
    manifest = _folder(root, "20250101-000006-manifest", {"title": "t", "turns": 1})
    (manifest / "namespace").mkdir()
    (manifest / "namespace" / "manifest.json").write_text("\x00\xff garbage")
    _folder(root, "20250101-000007-ctl\x1b[31m", {"title": "ok"})

    started = time.monotonic()
    rows = {r.path.name: r for r in list_sessions(root).sessions}
    assert time.monotonic() - started < 10  # the FIFO was not waited on
    assert len(rows) == 7
    assert "meta.json is not valid JSON" in rows["20250101-000001-bad-json"].note
    assert rows["20250101-000001-bad-json"].title == "bad json"  # from the folder's name
    assert "meta.json not read" in rows["20250101-000002-huge"].note
    assert "FIFO" in rows["20250101-000003-fifo"].note
    assert "not a JSON object" in rows["20250101-000004-list"].note
    typed = rows["20250101-000005-types"]
    assert typed.title == "Sales [red]x[/]"  # control and bidi characters gone, text kept
    assert typed.turns is None and typed.model is None
    assert "turns is not a count" in typed.note and "model is not text" in typed.note
    broken = rows["20250101-000006-manifest"]
    assert broken.variables is None and "snapshot manifest.json" in broken.note
    odd = rows["20250101-000007-ctl\x1b[31m"]
    assert odd.id == "20250101-000007-ctl" and "control characters" in odd.note
    for row in rows.values():
        shown = json.dumps(row.to_json(), ensure_ascii=False) + row.facts() + row.title
        assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
