"""`/load ID` in the app: a broken snapshot is an error line and nothing changes; pickles
nobody sealed are asked about, and declining loads everything else (pilot)."""

from __future__ import annotations

import json

from cave_tui.app.startup import DataOptions
from cave_tui.frontends.tui.screens.confirm import ConfirmScreen
from cave_tui.session import SessionRecorder
from tests.helpers.dumps import rehash, replace_with_payload
from tests.session.helpers import code, scripted_agent

from .conftest import chat_text, settle, submit, wait_for
from .test_app_data import make_data_app


async def _recorded(root, title):
    agent = scripted_agent([code("pair = (1, 'x' * 400)\nsecret = 41"), "done"])
    recorder = SessionRecorder.create(root, title=title, agent=agent)
    await recorder.run("make them")
    await recorder.close()
    return recorder.dir


async def _answer(pilot, key):
    """Answer the question on screen (no settle: the command may ask again)."""
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen))
    question = pilot.app.screen
    await pilot.press(key)
    await wait_for(pilot, lambda: pilot.app.screen is not question)


async def test_load_refuses_a_broken_snapshot_and_asks_before_unsealed_pickles(tmp_path):
    sessions, marker = tmp_path / "sessions", tmp_path / "payload-ran"
    broken = await _recorded(sessions, "broken")
    manifest_path = broken / "namespace" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["variables"][0]["name"] = "__builtins__"
    manifest_path.write_text(json.dumps(manifest))
    forged = await _recorded(sessions, "forged")
    replace_with_payload(forged / "namespace", "pair", marker)
    rehash(forged / "namespace", "pair")

    app = make_data_app([], DataOptions(sessions_dir=sessions))
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, f"/load {broken.name}")
        assert "starts with an underscore" in chat_text(app)
        assert not isinstance(app.screen, ConfirmScreen)  # refused before any question
        await submit(pilot, "!alive = 1")
        assert app.services.runtime._ns["alive"] == 1 and "secret" not in app.services.runtime._ns

        app.prompt.text = f"/load {forged.name}"
        await pilot.press("enter")
        await _answer(pilot, "y")  # replace the conversation
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "not trusted to run here (pair)" in str(app.screen.question)
        await _answer(pilot, "n")  # but not the pickles nobody sealed
        await wait_for(pilot, lambda: "not restored: pair" in chat_text(app))
        assert app.services.runtime._ns["secret"] == 41
        assert "pair" not in app.services.runtime._ns
        assert not marker.exists()
        await app.action_quit()
