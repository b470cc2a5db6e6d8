"""API keys out of the environment at app start: model code in process cannot read them,
the model client still sends them (explicitly, per call)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cave_tui import CaveAgent
from cave_tui.agent import EventType
from cave_tui.app import credentials as app_credentials
from cave_tui.app.credentials import is_credential_name, moved_notice, take_secrets_from_environment
from cave_tui.models.credentials import Credentials
from cave_tui.models.litellm_model import LiteLLMModel
from cave_tui.runtime import IPythonRuntime
from tests.helpers.openai_server import ScriptedOpenAIServer

KEY = "sk-test-do-not-leak-1234"
USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
READ_THE_KEY = """```python
import os, subprocess
seen = {
    "environ": os.environ.get("OPENAI_API_KEY"),
    "getenv": os.getenv("OPENAI_API_KEY"),
    "subprocess": "OPENAI_API_KEY" in subprocess.run(["env"], capture_output=True).stdout.decode(),
}
```"""


@pytest.fixture
def server():
    with ScriptedOpenAIServer() as srv:
        srv.script.extend(
            [("reply", READ_THE_KEY, "stop", USAGE), ("reply", "done", "stop", USAGE)]
        )
        yield srv


@pytest.fixture
def fresh_record(monkeypatch):
    """A clean record of what this process moved (the real one outlives a test)."""
    monkeypatch.setattr(app_credentials, "_TAKEN", {})


def test_which_names_are_moved():
    env = {
        "OPENAI_API_KEY": "secret-a", "ANTHROPIC_API_KEY": "b", "AWS_SECRET_ACCESS_KEY": "c",
        "HF_TOKEN": "d", "GITHUB_TOKEN": "e", "DB_PASSWORD": "f",
        "OPENAI_BASE_URL": "http://x", "HF_HOME": "/h", "CAVE_DATA_DIR": "/d", "PATH": "/bin",
    }  # fmt: skip
    taken = take_secrets_from_environment(env)
    assert set(taken.names) == {
        "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "HF_TOKEN",
        "GITHUB_TOKEN", "DB_PASSWORD",
    }  # fmt: skip
    assert set(env) == {"OPENAI_BASE_URL", "HF_HOME", "CAVE_DATA_DIR", "PATH"}
    assert "secret-a" not in repr(taken)  # values never shown
    for config in ("LITELLM_LOCAL_MODEL_COST_MAP", "TIKTOKEN_CACHE_DIR", "HF_TOKEN_PATH"):
        assert not is_credential_name(config)
    assert is_credential_name("GOOGLE_APPLICATION_CREDENTIALS")
    assert moved_notice(Credentials()) is None
    assert moved_notice(Credentials({"OPENAI_API_KEY": "k"})) == (
        "API keys moved out of the environment: OPENAI_API_KEY (model code cannot read them)"
    )
    assert Credentials({"OPENAI_API_KEY": "k", "AWS_SESSION_TOKEN": "t"}).litellm_kwargs(
        ["OPENAI_API_KEY", "AWS_SESSION_TOKEN", "NOT_HELD"]
    ) == {"api_key": "k", "aws_session_token": "t"}


async def test_model_code_cannot_read_the_key_but_the_server_gets_it(
    server, monkeypatch, fresh_record
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    held = take_secrets_from_environment()
    assert held.names == ("OPENAI_API_KEY",) and "OPENAI_API_KEY" not in os.environ
    model = LiteLLMModel("openai/test-model", api_base=server.base_url, credentials=held)
    runtime = IPythonRuntime()
    try:
        events = [e async for e in CaveAgent(model, runtime).stream_events("read the key")]
        assert events[-2].type is EventType.FINAL_RESPONSE
        seen = await runtime.retrieve("seen")
    finally:
        await runtime.stop()
    assert seen == {"environ": None, "getenv": None, "subprocess": False}
    assert [h["authorization"] for h in server.headers] == [f"Bearer {KEY}"] * 2


async def test_without_credentials_litellm_reads_the_environment_as_upstream(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    model = LiteLLMModel("openai/test-model", api_base=server.base_url)
    runtime = IPythonRuntime()
    try:
        events = [e async for e in CaveAgent(model, runtime).stream_events("read the key")]
        seen = await runtime.retrieve("seen")
    finally:
        await runtime.stop()
    assert events[-2].type is EventType.FINAL_RESPONSE
    assert seen["environ"] == KEY  # nothing was taken: the library's default is unchanged
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"


def test_the_app_moves_keys_before_building_the_model(monkeypatch, fresh_record):
    from cave_tui.frontends.cli.launch import build_services

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    services = build_services({"model": "openai/test-model"}, need_model=True)
    assert "OPENAI_API_KEY" not in os.environ
    assert services.model.credentials is services.credentials
    assert services.credentials.names == ("OPENAI_API_KEY",)
    assert any("OPENAI_API_KEY (model code cannot read them)" in n for n in services.notices)
    switched = services.set_model("openai/other-model")
    assert switched.credentials is services.credentials


def test_the_initial_environment_block_is_blanked_too():
    """`/proc/self/environ` shows the environment the process started with, after unsetenv."""
    code = (
        "import json, os\nfrom cave_tui.app.credentials import take_secrets_from_environment\n"
        "held = take_secrets_from_environment()\n"
        "block = open('/proc/self/environ', 'rb').read()\n"
        f"print(json.dumps([held.names, {KEY!r}.encode() in block, b'KEEP=me' in block]))"
    )
    env = {**os.environ, "OPENAI_API_KEY": KEY, "KEEP": "me"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [["OPENAI_API_KEY"], False, True]
