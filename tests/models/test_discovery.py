"""Local server discovery against real HTTP servers on 127.0.0.1 (Ollama's and OpenAI's APIs)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from cave_tui.models.discovery import (
    ServerKind,
    candidate_urls,
    describe_found,
    discover,
    ollama_url,
)
from tests.helpers.json_server import JsonRoutesServer

CAVE = str(Path(sys.executable).with_name("cave"))
OLLAMA_TAGS = {"models": [{"name": "llama3.2:3b"}, {"name": "qwen2.5-coder:7b"}]}
LLAMA_MODELS = {"object": "list", "data": [{"id": "qwen-1.5b", "owned_by": "llamacpp"}]}
LLAMA_PROPS = {"default_generation_settings": {"n_ctx": 8192}}
VLLM_MODELS = {"data": [{"id": "Qwen/Qwen2.5-7B", "owned_by": "vllm", "max_model_len": 32768}]}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_finds_ollama_and_openai_servers_with_exact_flags() -> None:
    with (
        JsonRoutesServer({"/api/tags": OLLAMA_TAGS}) as ollama,
        JsonRoutesServer({"/v1/models": LLAMA_MODELS, "/props": LLAMA_PROPS}) as llama,
        JsonRoutesServer({"/v1/models": VLLM_MODELS}) as vllm,
    ):
        urls = [("server", f"{llama.url}/v1"), ("server", f"{vllm.url}/v1")]
        servers = await discover(
            env={"OLLAMA_HOST": ollama.url}, openai_urls=urls, embedded_model=False
        )
    by_label = {s.label: s for s in servers}
    assert set(by_label) == {"Ollama", "llama.cpp", "vLLM"}
    assert by_label["Ollama"].kind is ServerKind.OLLAMA
    assert [m.flags for m in by_label["Ollama"].models] == [
        f"--model ollama_chat/llama3.2:3b --api-base {ollama.url}",
        f"--model ollama_chat/qwen2.5-coder:7b --api-base {ollama.url}",
    ]
    (qwen,) = by_label["llama.cpp"].models
    assert qwen.flags == f"--model openai/qwen-1.5b --api-base {llama.url}/v1"
    assert qwen.context_window == 8192  # from llama.cpp's /props
    assert by_label["vLLM"].models[0].context_window == 32768
    lines = describe_found(servers)
    assert any("[context 8,192]" in line for line in lines)


async def test_nothing_listening_is_reported_as_nothing_found() -> None:
    port = _closed_port()
    servers = await discover(
        env={"OLLAMA_HOST": f"127.0.0.1:{port}"},
        openai_urls=[("x", f"http://127.0.0.1:{port}/v1")],
        embedded_model=False,
    )
    assert servers == []
    assert "No local model server answered" in describe_found(servers)[0]


async def test_a_server_that_answers_garbage_is_left_out() -> None:
    with JsonRoutesServer({"/v1/models": ["not", "a", "listing"], "/api/tags": 3}) as junk:
        servers = await discover(
            env={"OLLAMA_HOST": junk.url},
            openai_urls=[("x", f"{junk.url}/v1")],
            embedded_model=False,
        )
    assert servers == []


def test_ollama_host_forms() -> None:
    assert ollama_url({}) == "http://127.0.0.1:11434"
    assert ollama_url({"OLLAMA_HOST": "0.0.0.0"}) == "http://127.0.0.1:11434"
    assert ollama_url({"OLLAMA_HOST": "box:9000"}) == "http://box:9000"
    assert ollama_url({"OLLAMA_HOST": "https://gpu.lan:443/"}) == "https://gpu.lan:443"


def test_cave_servers_adds_urls_once() -> None:
    urls = candidate_urls({"CAVE_SERVERS": "http://10.1.1.1:9000, http://10.1.1.1:9000/v1/"})
    assert urls.count(("server", "http://10.1.1.1:9000/v1")) == 1
    assert ("LM Studio", "http://127.0.0.1:1234/v1") in urls


def test_cave_models_command_lists_what_answers(tmp_path: Path) -> None:
    with (
        JsonRoutesServer({"/api/tags": OLLAMA_TAGS}) as ollama,
        JsonRoutesServer({"/v1/models": VLLM_MODELS}) as vllm,
    ):
        env = {"OLLAMA_HOST": ollama.url, "CAVE_SERVERS": vllm.url, "PATH": "/usr/bin:/bin"}
        text = subprocess.run(
            [CAVE, "models"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        as_json = subprocess.run(
            [CAVE, "models", "--json"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert text.returncode == 0, text.stderr
    assert f"--model openai/Qwen/Qwen2.5-7B --api-base {vllm.url}/v1" in text.stdout
    assert f"--model ollama_chat/llama3.2:3b --api-base {ollama.url}" in text.stdout
    listed = json.loads(as_json.stdout)
    assert {s["kind"] for s in listed} - {"embedded"} == {"ollama", "openai-compatible"}


def test_the_embedded_model_is_listed_when_installed(tmp_path, monkeypatch) -> None:
    from cave_tui.models.discovery import embedded
    from cave_tui.models.local import weights

    monkeypatch.setenv("CAVE_MODELS_DIR", str(tmp_path))
    monkeypatch.setattr(weights, "bundled_installed", lambda: False)
    assert embedded() == []  # neither the packages nor an assembled file
    (tmp_path / weights.BUNDLED_FILE).write_bytes(b"GGUF")
    (listed,) = embedded()
    assert listed.kind is ServerKind.EMBEDDED and listed.models[0].flags == "--model local"
    assert "cave starts it" in describe_found([listed])[0]


async def test_a_servers_model_names_are_listed_as_text_never_terminal_control() -> None:
    hostile = {"models": [{"name": "evil\x1b]0;pwned\x07\x1b[2J:7b"}]}
    with JsonRoutesServer({"/api/tags": hostile}) as ollama:
        servers = await discover(env={"OLLAMA_HOST": ollama.url}, embedded_model=False)
    lines = describe_found(servers)
    assert any("evil" in line for line in lines)
    assert not any("\x1b" in line or "\x07" in line for line in lines)
