"""Streaming Markdown: safe cut points, and what is frozen matches what was streamed."""

from __future__ import annotations

from textual.app import App

from cave_tui.frontends.tui.widgets import stream_markdown as sm
from cave_tui.frontends.tui.widgets.stream_markdown import StreamingMarkdown, last_boundary, scan


def test_boundary_is_after_a_blank_line_outside_fences():
    text = "para one\n\npara two\n"
    assert last_boundary(text) == text.index("para two")
    fenced = "```python\nx = 1\n\ny = 2\n```\n"
    assert last_boundary(fenced) == -1  # the blank line is inside the fence
    after = fenced + "\nnext\n"
    assert last_boundary(after) == after.index("next")


def test_boundary_ignores_indented_continuations_and_partial_lines():
    text = "- item\n\n  more of the item\n"
    assert last_boundary(text) == -1
    assert last_boundary("a\n\nb") == -1  # "b" is not a complete line yet


def test_scan_reports_an_open_fence():
    _cut, end, opener = scan("text\n\n```sql\nselect 1;\n")
    assert opener == "```sql\n" and end == len("text\n\n```sql\nselect 1;\n")
    assert scan("~~~\na\n~~~\n")[2] is None


class Doc(App):
    def compose(self):
        yield StreamingMarkdown(id="doc")


async def test_append_freezes_finished_blocks_and_keeps_every_character(monkeypatch):
    monkeypatch.setattr(sm, "FREEZE_CHARS", 200)
    text = "".join(f"Paragraph {i} " + "word " * 20 + "\n\n" for i in range(40))
    app = Doc()
    async with app.run_test(size=(80, 40)) as pilot:
        doc = app.query_one(StreamingMarkdown)
        for i in range(0, len(text), 7):
            doc.append(text[i : i + 7])
        await pilot.pause()
        assert doc.source == text
        assert doc.segment_count > 10
        frozen = "\n\n".join(doc.frozen.pieces)
        assert len(doc._tail.source) <= 2 * 200 + 7
        assert frozen.replace("\n", "") + doc._tail.source.replace("\n", "") == text.replace(
            "\n", ""
        )
        # The frozen part is drawn from cached lines, whatever its length.
        assert doc.frozen.size.height > 40
        assert "Paragraph 0" in doc.frozen.render_line(0).text


async def test_a_huge_code_fence_is_cut_and_reopened(monkeypatch):
    monkeypatch.setattr(sm, "FREEZE_CHARS", 100)
    code = "".join(f"line_{i} = {i}\n" for i in range(200))
    text = "Intro.\n\n```python\n" + code + "```\n\nAfter.\n"
    app = Doc()
    async with app.run_test(size=(80, 30)) as pilot:
        doc = app.query_one(StreamingMarkdown)
        for i in range(0, len(text), 50):
            doc.append(text[i : i + 50])
        await pilot.pause()
        assert doc.source == text
        pieces = doc.frozen.pieces
        assert len(pieces) > 5
        # Every frozen piece is valid on its own: fences are balanced.
        for piece in pieces:
            assert piece.count("```") % 2 == 0, piece
        assert len(doc._tail.source) < 400
