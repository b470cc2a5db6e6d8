"""The default preset by model class: small local models get `small`, the others `lean`;
a preset the user names always wins."""

import struct

import pytest

from cave_tui import CaveAgent
from cave_tui.agent.policies.model_class import (
    ModelClass,
    gguf_params,
    params_from_name,
    params_from_server,
    preset_for,
    served_params,
)
from cave_tui.models import ScriptedModel
from cave_tui.models.litellm_model import LiteLLMModel


def _gguf(path, pairs: list[tuple[str, int, bytes]]) -> None:
    """A GGUF header (v3, no tensors) with the given (key, type, packed value) pairs."""
    body = b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs))
    for key, kind, value in pairs:
        raw = key.encode()
        body += struct.pack("<Q", len(raw)) + raw + struct.pack("<I", kind) + value
    path.write_bytes(body)


def _text(value: str) -> bytes:
    return struct.pack("<Q", len(value)) + value.encode()


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("openai/qwen2.5-coder-1.5b-instruct", 1.5e9),
        ("ollama/llama3.2:3b", 3e9),
        ("qwen2.5-coder:7b", 7e9),
        ("mistralai/mixtral-8x7b-instruct", 56e9),
        ("gpt-4o", None),
        ("claude-sonnet-4-5", None),
        ("model-bf16", None),
    ],
)
def test_a_size_in_the_name_is_read(name, params):
    assert params_from_name(name) == params


def test_the_gguf_header_gives_the_count_and_else_its_size_label(tmp_path):
    counted = tmp_path / "model.gguf"
    _gguf(
        counted,
        [
            ("general.architecture", 8, _text("llama")),
            ("general.parameter_count", 10, struct.pack("<Q", 3_212_749_888)),
        ],
    )
    assert gguf_params(counted) == 3_212_749_888
    labelled = tmp_path / "other.gguf"
    _gguf(labelled, [("general.size_label", 8, _text("14B")), ("llama.x", 4, b"\0" * 4)])
    assert gguf_params(labelled) == 14e9
    assert gguf_params(tmp_path / "absent-0.5b.gguf") == 0.5e9  # unreadable: its name


def test_a_llama_cpp_server_reports_its_parameter_count():
    assert params_from_server({"n_params": 1_543_714_304}) == 1_543_714_304
    assert params_from_server({"model_path": "/m/Qwen2.5-72B-Q4.gguf"}) == 72e9
    assert params_from_server({}) is None


@pytest.mark.parametrize(
    ("model_id", "api_base", "preset", "model_class"),
    [
        ("openai/qwen2.5-coder-1.5b-instruct", "http://127.0.0.1:8431/v1", "small", "small"),
        ("ollama/llama3.2:3b", None, "small", "small"),
        ("openai/llama-3.1-70b", "http://localhost:8080/v1", "lean", "large"),
        ("openai/my-model", "http://127.0.0.1:8080/v1", "lean", "unsized"),
        ("gpt-4o", None, "lean", "hosted"),
        ("groq/llama-3.1-8b-instant", None, "lean", "hosted"),
    ],
)
def test_the_preset_follows_the_model_class(model_id, api_base, preset, model_class):
    choice = preset_for(LiteLLMModel(model_id, api_base=api_base))
    assert (choice.preset, choice.model_class) == (preset, ModelClass(model_class))
    assert choice.reason in choice.describe()


def test_the_embedded_model_gets_the_small_preset_with_its_size(tmp_path):
    weights = tmp_path / "qwen.gguf"
    _gguf(weights, [("general.parameter_count", 10, struct.pack("<Q", 1_500_000_000))])

    class Embedded(ScriptedModel):
        server = type("Server", (), {"weights": type("W", (), {"path": weights})()})()

    choice = preset_for(Embedded([]))
    assert choice.describe() == "small (the embedded model, 1.5B parameters)"


def test_an_agent_picks_by_class_unless_told_and_says_why():
    small = CaveAgent(LiteLLMModel("ollama/qwen2.5-coder:7b"), display=False)
    assert "look_first" in [p.name for p in small.policies]
    assert small.preset_choice.describe() == "small (a local model, 7B parameters from its name)"
    told = CaveAgent(LiteLLMModel("ollama/qwen2.5-coder:7b"), display=False, policies="lean")
    assert "look_first" not in [p.name for p in told.policies]
    assert told.preset_choice.model_class is ModelClass.CHOSEN
    hosted = CaveAgent(ScriptedModel([]), display=False)
    assert hosted.preset_choice.preset == "lean"
    hosted.policies = "strict"  # /policies
    assert hosted.preset_choice.describe() == "strict (set by the user)"


@pytest.fixture(scope="module")
def llama_cpp_like_server():
    """A real HTTP server on loopback answering `/v1/models` as llama.cpp does."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = {"data": [{"id": "my-model", "meta": {"n_params": 1_777_088_000}}]}
            raw = json.dumps(body).encode() if self.path == "/v1/models" else b"{}"
            self.send_response(200)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


async def test_a_local_model_its_name_does_not_size_is_sized_by_its_server(
    llama_cpp_like_server,
):
    assert await served_params("openai/my-model", llama_cpp_like_server) == 1_777_088_000

    class Local(ScriptedModel):
        api_base = llama_cpp_like_server

    agent = CaveAgent(Local(["Hello."], model_id="openai/my-model"), display=False)
    assert agent.preset_choice.model_class is ModelClass.UNSIZED  # before the first turn
    await agent.run("hi")
    assert agent.preset_choice.describe() == (
        "small (a local model, 1.8B parameters from its server)"
    )
    assert "look_first" in [p.name for p in agent.policies]
