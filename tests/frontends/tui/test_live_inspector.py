"""The inspector follows every namespace change, whatever made it, and lists every name.

Issue 14.4: it stayed at `Namespace (0)` after /inject, showed the old session's names after
/load, missed the names an interrupted cell made, and stopped at 10,000 names.
"""

from __future__ import annotations

from cave_tui.app.config import Config
from cave_tui.app.startup import DataOptions
from cave_tui.frontends.tui.screens.confirm import ConfirmScreen

from .conftest import chat_text, make_app, settle, submit, wait_for
from .test_app_data import make_data_app

LOOP_FOREVER = "import time\nwhile True:\n    time.sleep(0.01)\n"


def listed(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [row.name for row in app.inspector.table.rows]


async def test_inject_shows_the_new_name_in_the_inspector(tmp_path):
    (tmp_path / "birds.csv").write_text("species,mass\nAdelie,3700\nGentoo,5076\n")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "/inject birds.csv as birds")
        await wait_for(pilot, lambda: listed(app) == ["birds"])
        assert app.inspector.border_title == "Namespace (1)"
        await submit(pilot, "/del birds")
        await wait_for(pilot, lambda: listed(app) == [])


async def test_names_of_a_cell_stopped_with_ctrl_c_are_listed(tmp_path):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.prompt.text = "!early = 1\n" + LOOP_FOREVER
        app.prompt.action_submit()
        await wait_for(pilot, lambda: "early" in app.services.runtime._ns)
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.busy)
        await wait_for(pilot, lambda: "early" in listed(app))


async def test_names_of_an_agent_cell_cancelled_with_escape_are_listed(tmp_path):
    reply = "```python\nmade_here = 41 + 1\n" + LOOP_FOREVER + "```"
    app = make_app([reply])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.prompt.text = "make a number"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: "made_here" in app.services.runtime._ns)
        app.action_cancel_turn()  # what Esc does
        await wait_for(pilot, lambda: not app.busy)
        await wait_for(pilot, lambda: "made_here" in listed(app))


async def test_load_lists_the_loaded_sessions_names_only(tmp_path):
    sessions = tmp_path / "sessions"
    app = make_data_app([], DataOptions(sessions_dir=sessions))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "!from_the_first = 1")
        await submit(pilot, "/save first")
        first = app.services.session.id
        await app.action_quit()
    app = make_data_app([], DataOptions(sessions_dir=sessions))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "!from_the_second = 2")
        await wait_for(pilot, lambda: listed(app) == ["from_the_second"])
        app.prompt.text = f"/load {first}"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot)
        await wait_for(pilot, lambda: listed(app) == ["from_the_first"])
        assert "cannot do" not in chat_text(app)  # the app knows the request /load makes
        await app.action_quit()


async def test_every_name_is_listed_and_found_past_ten_thousand(tmp_path):
    app = make_app(config=Config(kernel=False, guard="trusted"))  # the checker refuses globals()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "!for _i in range(10_021):\n    globals()[f'v{_i}'] = _i")
        await wait_for(pilot, lambda: len(listed(app)) == 10_021)
        assert app.inspector.border_title == "Namespace (10,021)"
        app.inspector.filter_input.value = "v10020"
        await wait_for(pilot, lambda: [r.name for r in app.inspector.table.shown] == ["v10020"])
        assert app.inspector.border_title == "Namespace (1 of 10,021)"
