"""Issue 34, item 6: `cave run` with an `openai/` model against a local OpenAI-compatible server
answers through the light client and never imports litellm (nor the openai SDK): Python lists
every module it imports on stderr (`PYTHONPROFILEIMPORTTIME`), which is read at exit."""

from __future__ import annotations

import subprocess

from tests.frontends.cli.test_keyless_local_server import USAGE, _keyless_env
from tests.helpers.openai_server import ScriptedOpenAIServer
from tests.reliability.real_cave import CAVE


def _imported(stderr: str) -> set[str]:
    """The modules an import-time profile on *stderr* lists."""
    lines = (line.rpartition("|")[2].strip() for line in stderr.splitlines())
    return {name for name in lines if name and " " not in name}


def test_cave_run_against_a_local_server_never_imports_litellm(tmp_path):
    with ScriptedOpenAIServer() as server:
        server.script.append(("reply", "The answer is 4.", "stop", USAGE))
        line = ["run", "what is 2+2", "--in-process", "--model", "openai/local-m"]
        done = subprocess.run(
            [CAVE, *line, "--api-base", server.base_url],
            cwd=tmp_path,
            env={**_keyless_env(tmp_path), "PYTHONPROFILEIMPORTTIME": "1"},
            capture_output=True,
            text=True,
            timeout=90,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "The answer is 4." in done.stdout
    imported = _imported(done.stderr)
    assert "httpx" in imported  # the profile is there, and the light client was used
    assert "litellm" not in imported and "openai" not in imported
    assert server.requests[0]["model"] == "local-m"


def test_cave_run_with_a_scripted_model_imports_no_model_client(tmp_path):
    """Nothing that does not call a model server loads a client for one: not litellm, not
    httpx, not the embedded model's package."""
    replies = tmp_path / "replies.yaml"
    replies.write_text("- The answer is 4.\n")
    done = subprocess.run(
        [CAVE, "run", "what is 2+2", "--in-process", "--model", f"scripted:{replies}"],
        cwd=tmp_path,
        env={**_keyless_env(tmp_path), "PYTHONPROFILEIMPORTTIME": "1"},
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "The answer is 4." in done.stdout
    imported = _imported(done.stderr)
    assert "cave_tui.agent" in imported  # the profile is there
    assert not imported & {"litellm", "httpx", "openai", "cave_tui.models.local"}
