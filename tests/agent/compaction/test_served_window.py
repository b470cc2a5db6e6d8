"""The compaction window comes from the local server (llama.cpp's n_ctx, vLLM's max_model_len)."""

from __future__ import annotations

from cave_tui.agent import CaveAgent
from cave_tui.models import LiteLLMModel, ScriptedModel
from cave_tui.runtime.ipython import IPythonRuntime
from tests.helpers.json_server import JsonRoutesServer

LLAMA = {
    "/v1/models": {"data": [{"id": "qwen-1.5b", "owned_by": "llamacpp"}]},
    "/props": {"default_generation_settings": {"n_ctx": 8192}},
}


async def _first_step(agent: CaveAgent) -> None:
    async for _ in agent.compactor.maybe_compact(1):
        pass


async def test_llama_cpp_n_ctx_lowers_the_window_once() -> None:
    with JsonRoutesServer(LLAMA) as server:
        model = LiteLLMModel("openai/qwen-1.5b", api_base=f"{server.url}/v1")
        agent = CaveAgent(model, IPythonRuntime(), display=False, context_window=128_000)
        await _first_step(agent)
        await _first_step(agent)
        hits = list(server.hits)
    assert agent.compactor.effective_window == 8192
    assert agent.compactor.window_source == f"{server.url}/v1"
    assert hits == ["/v1/models", "/props"]  # asked once, not at every step


async def test_vllm_max_model_len_of_the_model_in_use() -> None:
    listing = {
        "data": [{"id": "other", "max_model_len": 2048}, {"id": "big", "max_model_len": 32768}]
    }
    with JsonRoutesServer({"/v1/models": listing}) as server:
        model = LiteLLMModel("openai/big", api_base=f"{server.url}/v1")
        agent = CaveAgent(model, IPythonRuntime(), display=False, context_window=128_000)
        await _first_step(agent)
    assert agent.compactor.effective_window == 32768


async def test_a_larger_served_window_or_a_silent_server_changes_nothing() -> None:
    roomy = {"/v1/models": {"data": [{"id": "m", "max_model_len": 1_000_000}]}}
    with JsonRoutesServer(roomy) as big, JsonRoutesServer({}) as silent:
        for url in (big.url, silent.url):
            model = LiteLLMModel("openai/m", api_base=f"{url}/v1")
            agent = CaveAgent(model, IPythonRuntime(), display=False, context_window=64_000)
            await _first_step(agent)
            assert agent.compactor.effective_window == 64_000
            assert agent.compactor.window_source is None


async def test_a_model_without_a_server_url_is_not_probed() -> None:
    agent = CaveAgent(ScriptedModel(["hi"]), IPythonRuntime(), display=False, context_window=64_000)
    await _first_step(agent)
    assert agent.compactor.effective_window == 64_000
