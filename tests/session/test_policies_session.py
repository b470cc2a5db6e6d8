"""A session records the policies it ran with, and its replay runs with the same ones, so a
refusal recorded by a policy is refused again (and the replay matches)."""

from __future__ import annotations

from cave_tui.session import SessionRecorder, read_session, replay_session
from tests.session.helpers import code, scripted_agent

BAD = code("flights_missing['x']")


async def test_the_replay_runs_the_recorded_policies(tmp_path):
    agent = scripted_agent([BAD, BAD, "I could not."], policies="minimal,repeat_guard")
    recorder = SessionRecorder.create(tmp_path / "sessions", agent=agent)
    await recorder.run("go")
    await recorder.close()
    data = read_session(recorder.dir)
    assert data.meta["policies"] == ["error_hints", "keep_given", "repeat_guard"]
    result = await replay_session(recorder.dir, pause=0)
    assert [p.name for p in result.agent.policies] == data.meta["policies"]
    assert result.ok, result.report()
    await result.runtime.stop()
