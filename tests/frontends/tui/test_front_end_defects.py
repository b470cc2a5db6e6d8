"""The smaller front-end defects of issue 14, item 8, each through the front end it was seen in."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml
from markdown_it import MarkdownIt

from cave_tui.app.startup import DataOptions
from cave_tui.frontends.tui.screens.confirm import ConfirmScreen
from cave_tui.frontends.tui.screens.help import help_markdown
from cave_tui.frontends.tui.widgets.chat import Notice
from cave_tui.frontends.tui.widgets.steplog import FoldedOutput, StepEntry

from .conftest import chat_text, make_app, settle, submit, wait_for
from .test_app_data import make_data_app

CAVE = str(Path(sys.executable).with_name("cave"))


def last_notice(app) -> str:
    return list(app.chat.query(Notice))[-1].text


async def test_start_up_says_what_was_injected_without_reprs(tmp_path):
    csv = tmp_path / "birds.csv"
    csv.write_text("species,mass\nAdelie,3700\nGentoo,5076\n")
    app = make_data_app([], DataOptions(inject=[f"{csv}:birds"], sessions_dir=tmp_path / "s"))
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.services.session is not None)
        await settle(pilot)
        text = chat_text(app)
        assert "Injected `birds`: DataFrame" in text and "birds.csv" in text
        assert "Injection(" not in text and "source={" not in text


def test_help_table_keeps_one_row_per_command():
    html = MarkdownIt("gfm-like").render(help_markdown())
    rows = [row for row in html.split("<tr>")[1:] if "<code>/" in row]
    assert rows and all(row.count("<td>") == 2 for row in rows)
    assert any("/policy [trusted|standard|strict]" in row for row in rows)


async def test_sessions_lists_whole_ids_in_a_narrow_chat(tmp_path):
    app = make_data_app([], DataOptions(sessions_dir=tmp_path / "s"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.services.session is not None)
        session_id = app.services.session.id
        await submit(pilot, "/sessions")
        notice = list(app.chat.query(Notice))[-1]
        assert f"`/load {session_id}`" in notice.text
        assert session_id in "".join(str(line.text) for line in notice.render_lines(notice.region))


async def test_reset_says_injected_objects_are_kept(tmp_path):
    csv = tmp_path / "birds.csv"
    csv.write_text("species,mass\nAdelie,3700\n")
    app = make_data_app([], DataOptions(inject=[f"{csv}:birds"], sessions_dir=tmp_path / "s"))
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.services.session is not None)
        await submit(pilot, "!made = 1")
        app.prompt.text = "/reset"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "`birds`" in app.screen.question and "put back" in app.screen.question
        app.screen.dismiss(True)
        await settle(pilot)
        assert "Kept, as injected:" in last_notice(app) and "`birds`" in last_notice(app)
        assert "made" not in app.services.runtime._ns and "birds" in app.services.runtime._ns


async def test_retrieve_into_a_folder_that_takes_no_files_says_so(tmp_path):
    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "!x = [1, 2]")
        await submit(pilot, "/retrieve x /proc/x.json")
        text = last_notice(app)
        assert "/proc does not take new files" in text and "does not exist" not in text


async def test_a_syntax_error_in_a_python_cell_is_a_syntax_error():
    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "!x = (")
        entry = app.steplog.query_one(StepEntry)
        assert entry.outcome == "SyntaxError"
        shown = app.steplog.query_one(FoldedOutput).full
        # Your own cells run unchecked: Python's own message and line, not "incomplete input".
        assert "SyntaxError: '(' was never closed" in shown and "x = (" in shown
        assert "incomplete input" not in shown


async def test_a_refused_cell_shows_its_reason_under_its_header():
    app = make_app(["```python\nimport os\nos.system('ls')\n```", "I cannot do that."])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "list the files")
        entry = app.steplog.query_one(StepEntry)
        assert entry.outcome == "blocked"
        kinds = [type(child) for child in entry.children]
        assert kinds[-1] is FoldedOutput and kinds.index(FoldedOutput) == 2, kinds


async def test_ctrl_o_unfolds_the_newest_long_output():
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "!for i in range(100): print(i)")
        output = app.steplog.query_one(FoldedOutput)
        assert output.hidden and not output.expanded
        await pilot.press("ctrl+o")
        assert output.expanded and app.focused is app.prompt
        await pilot.press("ctrl+o")
        assert not output.expanded


async def test_narrow_inspector_gives_way_to_what_runs_next():
    app = make_app([])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f2")
        assert app.screen.has_class("-show-inspector")
        await submit(pilot, "!y = 2")
        assert not app.screen.has_class("-show-inspector")


def test_json_run_reports_a_start_failure_as_an_error_event(tmp_path):
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(["hi"]))
    result = subprocess.run(
        [CAVE, "run", "t", "--model", f"scripted:{tmp_path / 'm.yaml'}", "--inject",
         "missing.csv", "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[-2]["type"] == "error" and "missing.csv" in events[-2]["content"]
    assert events[-1] == {"type": "status", "status": "error", "exit_code": 2}
