"""`cave run --skills DIR`: skills reach the agent; bad ones are reported, not fatal."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers.paths import REPO_ROOT
from tests.skills.conftest import write_skill

ROOT = REPO_ROOT


def test_cave_run_with_skills_dir(tmp_path):
    skills = tmp_path / "my-skills"
    write_skill(skills, "greeting", description="How to greet. Use to say hello.", body="SAY HI")
    write_skill(skills, "Bad_Name")
    script = tmp_path / "replies.yaml"
    script.write_text(
        "- \"```python\\nactivate_skill('greeting')\\nactivate_skill('charts')\\n```\"\n- Hi!\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "cave_tui",
            "run",
            "say hello",
            "--model",
            f"scripted:{script}",
            "--skills",
            str(skills),
            "--json",
            "--policy",
            "trusted",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)},
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    notices = [e["content"] for e in events if e["type"] == "notice"]  # --json: on stdout
    assert any("skill skipped:" in n and "Bad_Name/SKILL.md" in n for n in notices), notices
    result = next(e for e in events if e["type"] == "execution_output")
    assert "=== Skill 'greeting' instructions (in full) ===\nSAY HI" in result["content"]
    assert "=== Skill 'charts' instructions (in full) ===" in result["content"]  # bundled
    assert events[-2] == {**events[-2], "type": "final_response", "content": "Hi!"}
    assert events[-1] == {"type": "status", "status": "completed", "exit_code": 0}
