"""The ports of upstream CaveAgent 0.8's examples (examples/upstream/v08/) run offline,
each as `__main__`, with test_upstream_examples.py's scripted model standing in for the
hosted one; the checks are what each example shows."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from cave_tui.agent import EventType
from tests.compat.scripted import ConversationModel, ExampleRun, Turn, run_example
from tests.compat.test_upstream_examples import ENV, compaction_turns
from tests.helpers.paths import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples" / "upstream" / "v08"


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    """`run(name, turns)` -> (ExampleRun, stdout) for examples/upstream/v08/<name>.py."""
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)

    def go(name: str, turns: list[Turn], **options: Any) -> tuple[ExampleRun, str]:
        result = run_example(
            EXAMPLES / f"{name}.py", ConversationModel(turns, **options), monkeypatch
        )
        return result, capsys.readouterr().out

    return go


def test_every_08_example_has_a_port_and_a_test() -> None:
    ported = {p.stem for p in EXAMPLES.glob("*.py")}
    assert ported == {"large_output", "compaction_demo"}
    tested = {n.removeprefix("test_08_") for n in globals() if n.startswith("test_08_")}
    assert ported <= tested


def test_08_large_output(run: Any) -> None:
    result, out = run(
        "large_output",
        [
            Turn("print everything it returns", "print(fetch_log())", "The log is long."),
            Turn(
                "How many ERROR lines",
                "lines = _output_1.splitlines()\n"
                "errors = [l for l in lines if ' ERROR ' in l]\n"
                "top = max(int(l.rsplit('latency=', 1)[1].removesuffix('ms')) for l in lines)\n"
                "print(len(errors), top)",
                "8 ERROR lines; the highest latency is 299ms.",
            ),
        ],
    )
    (agent,) = result.agents
    log = asyncio.run(agent.runtime.retrieve("_output_1"))
    assert len(log.splitlines()) == 4000
    assert f"[host] _output_1 holds {len(log):,} characters" in out
    # The model read the marker, then answered from the kept value, not a second fetch.
    outputs = result.events_of(agent, EventType.EXECUTION_OUTPUT)
    assert outputs[0].persisted_variable == "_output_1"
    assert "<persisted-output>" in outputs[0].observation
    assert outputs[1].content.strip() == "8 299"
    assert sum("fetch_log()" in e.content for e in result.events_of(agent, EventType.CODE)) == 1
    assert out.count("done  ") == 2  # each run drawn to its end by the renderer


def test_08_compaction_demo(run: Any) -> None:
    result, out = run("compaction_demo", compaction_turns())
    (agent,) = result.agents
    assert len(result.events_of(agent, EventType.FINAL_RESPONSE)) == 5  # every run answered
    compacted = result.events_of(agent, EventType.COMPACTED)
    assert compacted, "a 3,000-token window should have been compacted"
    assert all(e.tokens_after < e.tokens_before for e in compacted)
    report = asyncio.run(agent.runtime.retrieve("report"))
    assert report["quarters"] == [710, 1990, 1650, 1360]
    assert report["above_average"] == [4, 5, 7, 8, 12]
    assert out.count("done  ") == 5  # each run drawn to its end by the renderer
    assert "=== Final report ===" in out and "'quarters': [710, 1990, 1650, 1360]" in out
