"""`--policies` on `cave run`, `cave --plain` and `cave`: chosen, shown, refused when unknown."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

CAVE = str(Path(sys.executable).with_name("cave"))
BAD = "```python\nflights_missing['x']\n```"


def _cave(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CAVE, *args], cwd=cwd, capture_output=True, text=True, timeout=60, input=stdin
    )


def _model(tmp_path: Path, replies: list[str]) -> str:
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(replies))
    return f"scripted:{path}"


def test_cave_run_json_prints_each_intervention_and_the_session_keeps_it(tmp_path):
    model = _model(tmp_path, [BAD, BAD, "I could not."])
    result = _cave("run", "go", "--model", model, "--json", "--policies", "minimal,repeat_guard",
                   cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    acts = [(e["policy"], e["kind"]) for e in events if e["type"] == "intervention"]
    assert ("repeat_guard", "refuse") in acts and ("error_hints", "hint") not in acts
    recorded = (next((tmp_path / "sessions").rglob("*.jsonl"))).read_text()
    assert '"intervention"' in recorded and "repeat_guard" in recorded


def test_off_runs_the_raw_loop(tmp_path):
    model = _model(tmp_path, [BAD, BAD, "I could not."])
    result = _cave("run", "go", "--model", model, "--json", "--policies", "off", cwd=tmp_path)
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert not [e for e in events if e["type"] == "intervention"]
    assert len([e for e in events if e["type"] == "execution_error"]) == 2


@pytest.mark.parametrize("front", [["run", "go"], ["--plain"]])
def test_an_unknown_policy_stops_the_start_with_the_valid_names(tmp_path, front):
    model = _model(tmp_path, ["hi"])
    result = _cave(*front, "--model", model, "--policies", "guided,-tipz", cwd=tmp_path)
    assert result.returncode == 2
    assert "tipz" in result.stderr and "minimal" in result.stderr and "rewind" in result.stderr


def test_the_plain_repl_shows_interventions_and_policies_switch_there(tmp_path):
    model = _model(tmp_path, [BAD, BAD, "I could not."])
    result = _cave("--plain", "--model", model, "--policies", "strict", cwd=tmp_path,
                   stdin="/policies\ngo\n/quit\n")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Policies: `strict`" in result.stdout or "Policies: strict" in result.stdout
    assert "[repeat_guard refuse]" in result.stdout or "[rewind rewind]" in result.stdout


def test_policies_says_which_preset_the_model_class_chose_and_why(tmp_path):
    model = _model(tmp_path, ["hi"])
    result = _cave("--plain", "--model", model, cwd=tmp_path,
                   stdin="/policies\n/policies small\n/policies auto\n/quit\n")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Policies: lean (not a local model)" in result.stdout
    assert "Policies set to `small`." in result.stdout
    assert "Policies set to `auto`. By the model's class: lean (not a local model)." in (
        result.stdout
    )
