"""Widgets on their own: bounded widget counts in long sessions, folded output, the var table."""

from __future__ import annotations

from textual.app import App

from cave_tui.frontends.tui.widgets import chat as chat_mod
from cave_tui.frontends.tui.widgets import steplog as log_mod
from cave_tui.frontends.tui.widgets.chat import ChatPane
from cave_tui.frontends.tui.widgets.inspector import VarTable
from cave_tui.frontends.tui.widgets.steplog import FoldedOutput, StepLog, fold
from cave_tui.runtime.shipped.summary import summarize


class Panes(App):
    selected: list[str] = []

    def on_var_table_selected(self, message: VarTable.Selected) -> None:
        self.selected.append(message.name)

    def compose(self):
        yield ChatPane(id="chat")
        yield StepLog(id="log")
        yield VarTable(id="table")


async def test_chat_and_log_keep_a_bounded_number_of_widgets():
    app = Panes()
    async with app.run_test(size=(100, 40)) as pilot:
        chat = app.query_one(ChatPane)
        log = app.query_one(StepLog)
        for i in range(chat_mod.MAX_ITEMS + 50):
            chat.add_notice(f"note {i}")
        for i in range(log_mod.MAX_ENTRIES + 40):
            entry = log.add_code(i + 1, None, f"x = {i}")
            entry.finish("ok", output=str(i))
        await pilot.pause()
        assert len(chat.children) == chat_mod.MAX_ITEMS
        assert chat.children[-1].text == f"note {chat_mod.MAX_ITEMS + 49}"
        assert len(log.children) == log_mod.MAX_ENTRIES
        assert log.children[-1].code == f"x = {log_mod.MAX_ENTRIES + 39}"


async def test_long_output_is_folded_and_unfolds():
    text = "\n".join(f"row {i}" for i in range(500))
    folded, hidden = fold(text)
    assert hidden == 500 - log_mod.FOLD_LINES and "row 250" not in folded
    assert folded.startswith("row 0") and folded.endswith("row 499")
    app = Panes()
    async with app.run_test() as pilot:
        log = app.query_one(StepLog)
        log.add_code(1, None, "print(...)").finish("ok", output=text)
        await pilot.pause()
        output = log.query_one(FoldedOutput)
        assert output.size.height < 20
        output.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert output.expanded and output.size.height == 500


async def test_var_table_filters_and_highlights_changed_rows():
    app = Panes()
    async with app.run_test(size=(100, 20)) as pilot:
        table = app.query_one(VarTable)
        rows = [summarize(f"v{i}", i) for i in range(10_000)]
        table.set_rows(rows, changed={"v3"})
        table.focus()
        await pilot.pause()
        assert len(table.shown) == 10_000 and table.virtual_size.height == 10_000
        line = table.render_line(3)
        assert line.text.startswith("v3 ")
        changed_style = table.get_component_rich_style("vartable--changed")
        assert any(seg.style and seg.style.bgcolor == changed_style.bgcolor for seg in line)
        table.set_filter("v999")
        assert [r.name for r in table.shown][:2] == ["v999", "v9990"]
        await pilot.press("down")
        assert table.selected_name == "v9990"
        await pilot.press("enter")
        assert app.selected == ["v9990"]
