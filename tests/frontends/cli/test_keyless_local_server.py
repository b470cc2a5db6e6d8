"""Issue 31, item 1: the line `cave models` prints for a local OpenAI-compatible server
(`--model openai/ID --api-base http://127.0.0.1:PORT/v1`) works with no API key anywhere;
with nothing listening there, `cave run` fails at once, naming the URL."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from tests.helpers.openai_server import ScriptedOpenAIServer
from tests.reliability.real_cave import CAVE, env

USAGE = {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}


def _keyless_env(tmp_path: Path) -> dict[str, str]:
    """A child `cave`'s environment with no API key and no model URL of the host's."""
    out = env(tmp_path)
    for name in list(out):
        if name.endswith(("_API_KEY", "_BASE_URL", "_API_BASE")) or name.startswith("OPENAI"):
            del out[name]
    return out


def _run(
    tmp_path: Path, url: str, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    line = ["run", "what is 2+2", "--in-process", "--model", "openai/local-m", "--api-base", url]
    return subprocess.run(
        [CAVE, *line],
        cwd=tmp_path,
        env={**_keyless_env(tmp_path), **(extra_env or {})},
        capture_output=True,
        text=True,
        timeout=90,
    )


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_keyless_local_server_is_asked_and_answers(tmp_path):
    assert not any(k.endswith("_API_KEY") for k in _keyless_env(tmp_path))
    with ScriptedOpenAIServer() as server:
        server.script.append(("reply", "The answer is 4.", "stop", USAGE))
        done = _run(tmp_path, server.base_url)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "The answer is 4." in done.stdout and "no API key" not in said
    (headers,) = server.headers  # the request reached the server, with no key in it
    assert headers.get("authorization", "") == ""
    assert "what is 2+2" in str(server.requests[0]["messages"])


def test_nothing_listening_fails_at_once_naming_the_url(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    started = time.monotonic()
    # Python lists every module it imports on stderr: the refusal must come before litellm's
    # import (seconds), which is what "at once" means whatever the machine's load.
    done = _run(tmp_path, url, {"PYTHONPROFILEIMPORTTIME": "1"})
    took = time.monotonic() - started  # the whole process: start-up and the refused connection
    imports = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    said = done.stdout + "\n".join(
        line for line in done.stderr.splitlines() if not line.startswith("import time:")
    )
    assert done.returncode == 2, said
    assert url in said and "connection" in said and "refused" in said, said
    assert "no API key" not in said
    assert imports and not any(line.endswith((" litellm", " openai")) for line in imports)
    assert took < 30, took  # no retries with backoff (a 2-core machine under load: generous)
