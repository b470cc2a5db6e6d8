"""Quitting the app when `--dump DIR` cannot be written: a red line, the app stays once."""

from __future__ import annotations

from cave_tui.app.startup import EXIT_DUMP_FAILED, DataOptions
from cave_tui.frontends.tui.widgets.chat import Notice

from .conftest import chat_text, settle, submit, wait_for
from .test_app_data import make_data_app


async def test_a_failed_dump_is_a_red_line_and_the_next_quit_leaves(tmp_path):
    data = DataOptions(dump=tmp_path / "out", sessions_dir=tmp_path / "s")
    app = make_data_app(None, data)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.services.session is not None)
        await submit(pilot, "!kept = 41")
        (tmp_path / "out").write_text("a file now")  # the target went bad while working
        await submit(pilot, "/quit")
        assert app.is_running  # nothing is lost: the app stays
        errors = [n for n in app.query(Notice) if n.has_class("-error")]
        assert errors and "dump failed" in errors[-1].text and "it is a file" in errors[-1].text
        assert "Quit again" in chat_text(app)
        assert app.services.data_features.exit_code(0) == EXIT_DUMP_FAILED
        await submit(pilot, "/quit")
        await pilot.pause()
    assert not app.is_running
    assert any("dump failed" in line for line in app.services.exit_messages)
