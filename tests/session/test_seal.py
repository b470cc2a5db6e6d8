"""Sessions remember whether their pickles were trusted: a sealed snapshot resumes whole,
anyone else's pickles are held back (and kept) until a resume with trust."""

from __future__ import annotations

import json

import pytest

from cave_tui.dataio import DataIOError
from cave_tui.session import SessionRecorder, read_session, resume_session
from cave_tui.session.seal import META_KEY
from tests.session.helpers import code, scripted_agent


async def _session_with_a_pickle(tmp_path):
    agent = scripted_agent([code("pair = (1, 2)\nn = 5"), "done"])
    recorder = SessionRecorder.create(tmp_path / "sessions", agent=agent)
    await recorder.run("make them")
    await recorder.close()
    manifest = json.loads((recorder.namespace_dir / "manifest.json").read_text())
    assert {e["name"]: e["format"] for e in manifest["variables"]} == {
        "pair": "pickle",
        "n": "json",
    }
    return recorder.dir


def _manifest_names(folder):
    manifest = json.loads((folder / "namespace" / "manifest.json").read_text())
    return sorted(e["name"] for e in manifest["variables"])


async def test_own_pickles_resume_and_anyone_elses_are_held_back_and_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("CAVE_DATA_DIR", str(tmp_path / "mine"))
    folder = await _session_with_a_pickle(tmp_path)
    assert read_session(folder).meta[META_KEY]["untrusted"] == []
    key = tmp_path / "mine" / "snapshot.key"
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 32

    mine = scripted_agent([])
    result = await resume_session(folder, mine)  # no trust needed: this cave sealed it
    assert sorted(result.restored) == ["n", "pair"] and result.not_restored == []
    assert await mine.runtime.retrieve("pair") == (1, 2)
    await result.recorder.close()

    monkeypatch.setenv("CAVE_DATA_DIR", str(tmp_path / "someone-else"))  # another key
    theirs = scripted_agent([code("n = n + 1"), "ok"])
    result = await resume_session(folder, theirs)
    assert result.restored == ["n"]
    [held] = result.not_restored
    assert held["name"] == "pair" and "not trusted" in held["reason"]
    assert "--trust" in result.summary()
    assert "pair" not in await theirs.runtime.names()
    await result.recorder.run("bump")  # snapshots after a step and at the turn's end
    await result.recorder.close()
    assert _manifest_names(folder) == ["n", "pair"]  # kept for a resume with trust
    assert read_session(folder).meta[META_KEY]["untrusted"] == ["pair"]

    trusted = scripted_agent([])
    result = await resume_session(folder, trusted, trust=True)
    assert sorted(result.restored) == ["n", "pair"]
    assert await trusted.runtime.retrieve("n") == 6
    await result.recorder.close()
    assert read_session(folder).meta[META_KEY]["untrusted"] == []
    again = await resume_session(folder, scripted_agent([]))  # sealed by this key now
    assert sorted(again.restored) == ["n", "pair"]
    await again.recorder.close()


async def test_a_forged_seal_vouches_for_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("CAVE_DATA_DIR", str(tmp_path / "mine"))
    folder = await _session_with_a_pickle(tmp_path)
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta[META_KEY]["untrusted"] = ["n"]  # a different list under the same HMAC
    meta_path.write_text(json.dumps(meta))
    result = await resume_session(folder, scripted_agent([]))
    assert result.restored == ["n"] and result.not_restored[0]["name"] == "pair"
    await result.recorder.close()


async def test_a_failed_resume_changes_nothing(tmp_path):
    folder = await _session_with_a_pickle(tmp_path)
    path = folder / "namespace" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["variables"][0]["format"] = "made-up"  # the manifest itself is not valid
    path.write_text(json.dumps(manifest))
    agent = scripted_agent([])
    agent.history.append({"role": "user", "content": "before"})
    with pytest.raises(DataIOError, match="unknown format"):
        await resume_session(folder, agent)
    assert agent.history == [{"role": "user", "content": "before"}]
    assert await agent.runtime.names() == []
    # The log is not left locked, nor the agent recorded into the failed session.
    SessionRecorder.open(folder).log.close()
    assert agent._sinks == []
