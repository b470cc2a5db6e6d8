"""`cave run` pre-seeds, records, dumps and resumes; `cave replay` checks. Real processes."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

from cave_tui.session import SessionStore, read_session

CAVE = str(Path(sys.executable).with_name("cave"))


def _script(path: Path, replies: list[str]) -> str:
    path.write_text(yaml.safe_dump(replies))
    return f"scripted:{path}"


def _code(src: str) -> str:
    return f"```python\n{src}\n```"


def _cave(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CAVE, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def test_a_file_that_cannot_be_loaded_stops_the_start(tmp_path):
    model = _script(tmp_path / "m.yaml", ["hi"])
    (tmp_path / "bad.parquet").write_text("a,b\n1,2\n")
    result = _cave("run", "t", "--model", model, "--inject", "bad.parquet", cwd=tmp_path)
    assert result.returncode == 2
    assert "cannot start" in result.stderr and "bad.parquet" in result.stderr
    assert "look like text" in result.stderr
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())
    result = _cave("run", "t", "--model", model, "--inject", "nope.csv", cwd=tmp_path)
    assert result.returncode == 2 and "nope.csv: no such file" in result.stderr


def test_pickles_need_trust_on_the_command_line(tmp_path):
    (tmp_path / "obj.pkl").write_bytes(pickle.dumps({"k": 7}))
    model = _script(tmp_path / "m.yaml", [_code("print(cfg['k'])"), "seven"])
    result = _cave("run", "t", "--model", model, "--inject", "obj.pkl:cfg", cwd=tmp_path)
    assert result.returncode == 2 and "--trust" in result.stderr
    result = _cave(
        "run", "t", "--model", model, "--inject", "obj.pkl:cfg", "--trust", "--json", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    outputs = [json.loads(line) for line in result.stdout.splitlines()]
    assert any(e.get("output") == "7\n" for e in outputs)


def test_preseed_records_and_dumps_on_exit(tmp_path):
    pd.DataFrame({"v": [1, 2, 3]}).to_csv(tmp_path / "nums.csv", index=False)
    model = _script(tmp_path / "m.yaml", [_code("total = int(nums.v.sum())\nprint(total)"), "6"])
    result = _cave(
        "run", "sum", "--model", model, "--inject", "nums.csv", "--dump", "out",
        "--sessions-dir", "s", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert {e["name"] for e in manifest["variables"]} == {"nums", "total"}
    session = SessionStore(tmp_path / "s").resolve("last")
    data = read_session(session)
    injection = next(r for r in data.records if r["type"] == "injection")
    assert injection["name"] == "nums" and injection["source"]["path"].endswith("nums.csv")
    assert len(injection["source"]["sha256"]) == 64
    # --load restores the dump into a new run
    model2 = _script(tmp_path / "m2.yaml", [_code("print(total, len(nums))"), "ok"])
    result = _cave("run", "again", "--model", model2, "--load", "out", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert any(json.loads(x).get("output") == "6 3\n" for x in result.stdout.splitlines())


def _wait_for(predicate, proc, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "exited"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _records(sessions: Path) -> list[dict]:
    folders = [p for p in sessions.glob("*") if (p / "events.jsonl").exists()]
    if not folders:
        return []
    return read_session(folders[0]).records


def test_sigterm_mid_turn_dumps_and_records_the_end(tmp_path):
    model = _script(
        tmp_path / "m.yaml", [_code("kept = 1"), _code("import time\ntime.sleep(60)"), "x"]
    )
    proc = subprocess.Popen(
        [CAVE, "run", "t", "--model", model, "--dump", "out", "--sessions-dir", "s"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _wait_for(lambda: any(r["type"] == "code" and r["step"] == 2 for r in _records(
            tmp_path / "s")), proc)  # fmt: skip
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [e["name"] for e in manifest["variables"]] == ["kept"]
    data = read_session(next((tmp_path / "s").iterdir()))
    assert data.meta["status"] == "terminated"
    assert data.records[-1]["type"] == "closed"


def test_kill_9_mid_turn_then_resume_restores_every_completed_step(tmp_path):
    """The durability test: a real `cave run` killed with SIGKILL while step 3 runs."""
    model = _script(
        tmp_path / "first.yaml",
        [
            _code("a = 20\nprint(a)"),
            _code(
                "import pandas as pd\nframe = pd.DataFrame({'v': [a, a + 1]})\nprint(len(frame))"
            ),
            _code("import time\nlost = 1\ntime.sleep(120)"),
            "never reached",
        ],
    )
    proc = subprocess.Popen(
        [CAVE, "run", "analyse", "--model", model, "--sessions-dir", "s"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        # Wait until step 2 is complete on disk (its output and its snapshot, taken in the
        # background), and step 3 runs.
        _wait_for(lambda: {("code", 3), ("snapshot", 2)} <= {(r["type"], r.get("step"))
            for r in _records(tmp_path / "s")}, proc)  # fmt: skip
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    folder = next((tmp_path / "s").iterdir())
    before = read_session(folder)
    assert before.meta["status"] == "running"  # nobody closed it
    completed = [r for r in before.records if r["type"] == "execution_output"]
    assert [r["output"] for r in completed] == ["20\n", "2\n"]

    check = _script(
        tmp_path / "second.yaml",
        [_code("print(a, frame.v.tolist(), pd.__name__)"), "resumed"],
    )
    result = _cave(
        "run", "check", "--model", check, "--sessions-dir", "s", "--resume", "--json",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = [json.loads(x) for x in result.stdout.splitlines()]
    notices = [e["content"] for e in events if e["type"] == "notice"]  # --json: all on stdout
    assert any("turn 1 had been interrupted" in text for text in notices)
    outputs = [e.get("output") for e in events]
    assert "20 [20, 21] pandas\n" in outputs

    after = read_session(folder)
    resumed = next(r for r in after.records if r["type"] == "resume")
    assert sorted(resumed["restored"]) == ["a", "frame", "pd"]  # not `lost`: step 3 never ended
    messages = [r for r in after.records if r["type"] == "message"]
    contents = [m["content"] for m in messages]
    assert contents[0] == "analyse"
    assert any("frame = pd.DataFrame" in c for c in contents)  # step 2's reply
    assert any(c.startswith("Output:\n2") for c in contents)  # and its output
    assert "lost = 1" in "".join(contents)  # step 3's reply was recorded before it ran
    assert after.meta["status"] == "completed" and after.meta["turns"] == 2


def test_replay_check_passes_then_fails_with_a_diff_when_an_output_is_altered(tmp_path):
    model = _script(tmp_path / "m.yaml", [_code("print(sum(range(10)))"), "45"])
    assert (
        _cave("run", "sum", "--model", model, "--sessions-dir", "s", cwd=tmp_path).returncode == 0
    )
    result = _cave("replay", "last", "--sessions-dir", "s", "--headless", "--check", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "matches the recording" in result.stdout
    events = next((tmp_path / "s").iterdir()) / "events.jsonl"
    events.write_text(events.read_text().replace('"output":"45\\n"', '"output":"46\\n"'))
    result = _cave("replay", "last", "--sessions-dir", "s", "--headless", "--check", cwd=tmp_path)
    assert result.returncode == 1
    assert "DIVERGED" in result.stdout and "-46" in result.stdout and "+45" in result.stdout
    # Without --headless the replay opens the app (tests/tui/test_app_data.py); an unknown
    # session stops before it opens.
    result = _cave("replay", "no-such-session", "--sessions-dir", "s", cwd=tmp_path)
    assert result.returncode == 2 and "no-such-session" in result.stderr


async def test_an_unhandled_error_still_dumps_and_closes_the_session(tmp_path, capsys):
    from cave_tui.app.config import Config
    from cave_tui.app.services import AppServices
    from cave_tui.app.startup import DataOptions
    from cave_tui.frontends.cli.data_commands import run_task
    from cave_tui.models import ScriptedModel
    from cave_tui.runtime.ipython import IPythonRuntime

    model = ScriptedModel([_code("partial = [1, 2]"), RuntimeError("the model client broke")])
    services = AppServices(Config(kernel=False), model=model, runtime=IPythonRuntime())
    options = DataOptions(dump=tmp_path / "out", sessions_dir=tmp_path / "s")
    code = await run_task(services, "t", True, options)
    assert code == 2
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    errors = [e for e in events if e["type"] == "error" and e.get("kind") == "crash"]
    assert errors and "RuntimeError: the model client broke" in errors[-1]["content"]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [e["name"] for e in manifest["variables"]] == ["partial"]
    data = read_session(next((tmp_path / "s").iterdir()))
    assert data.meta["status"] == "crashed" and data.records[-1]["type"] == "closed"


def test_cave_run_a_slash_command_needs_no_model(tmp_path):
    """`cave run "/COMMAND"`: a dump's variable retrieved to a file, a resumed session exported."""
    model = _script(tmp_path / "m.yaml", [_code("total = sum(range(5))\nprint(total)"), "10"])
    made = _cave(
        "run", "sum", "--model", model, "--dump", "out", "--sessions-dir", "s", cwd=tmp_path
    )
    assert made.returncode == 0, made.stderr
    result = _cave(
        "run", "/retrieve total total.json", "--load", "out", "--sessions-dir", "s", "--json",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "total.json").read_text()) == 10
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert any(e["type"] == "notice" and "total.json" in e["content"] for e in events)

    (first,) = [p.name for p in (tmp_path / "s").iterdir()]  # a command alone records none
    listed = _cave("run", "/sessions", "--sessions-dir", "s", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert first in listed.stdout and "(current)" not in listed.stdout

    unknown = _cave("run", "/retreive total", "--sessions-dir", "s", "--json", cwd=tmp_path)
    assert unknown.returncode == 2
    errors = [json.loads(line) for line in unknown.stdout.splitlines()]
    assert any(e["type"] == "error" and "Did you mean /retrieve?" in e["content"] for e in errors)
