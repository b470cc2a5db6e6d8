"""The examples/ scripts run end to end offline (scripted replies, live code)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers.paths import REPO_ROOT

ROOT = REPO_ROOT


def run_example(name: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAVE_")}
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_skills_example():
    out = run_example("skills_demo.py")
    assert "skills: charts, data-analysis" in out
    assert "=== Skill 'data-analysis' instructions (in full) ===" in out
    assert "penguins: 344 rows x 8 columns" in out
    assert "   Gentoo │████████████████████████████████████████ 5,076.0" in out
    assert "skills whose injection.py was imported: ['charts', 'data-analysis']" in out


def test_compaction_example():
    out = run_example("compaction_demo.py")
    assert "(tier 1: cleared 1 old outputs)" in out
    assert "summariser call:" in out and "tier 2:" in out
    assert (
        "still live in the session: penguins, stats, counts, bills, flippers, mass, unsexed" in out
    )


def test_multi_agent_example():
    out = run_example("multi_agent.py")
    assert "[cleaner] final_response: Kept 3 of 6 records." in out
    assert "[analyzer] step 1 code:" in out
    assert "cleaned: ['Alice', 'Diana', 'Frank']" in out
    assert "insights: {'total_records': 3, 'avg_age': 31.0, 'avg_salary': 58333.33}" in out
    assert "cleaner namespace: data, cleaned_data\n" in out


@pytest.mark.llm
@pytest.mark.parametrize("name", ["skills_demo.py", "multi_agent.py"])
def test_examples_with_the_local_model(name):
    """Opt-in (pytest -m llm): the same scripts against the local real model."""
    env = dict(os.environ)
    env.setdefault("CAVE_MODEL", "openai/qwen2.5-coder-1.5b-instruct")
    env.setdefault("CAVE_API_BASE", "http://127.0.0.1:8411/v1")
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "final_response" in out.stdout or "max_steps_reached" in out.stdout
