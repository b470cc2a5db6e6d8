"""Upstream CaveAgent's model API under cave_tui: its constructors, its names, its Model interface.

The HTTP paths talk to a scripted OpenAI-compatible server on 127.0.0.1; no hosted model.
"""

import subprocess
import sys
from typing import Dict, List  # noqa: UP035 - written the way upstream's interface is

import pytest

from cave_tui import CaveAgent
from cave_tui.agent import AgentStatus, EventType
from cave_tui.models import (
    LiteLLMModel,
    Model,
    ModelResponse,
    OpenAIServerModel,
    ScriptedModel,
    StreamResponse,
    TokenUsage,
)
from cave_tui.models.adapt import StopCutter, stream_items
from cave_tui.models.openai_http import OpenAIHTTPModel
from cave_tui.runtime import IPythonRuntime
from tests.helpers.openai_server import ScriptedOpenAIServer
from tests.helpers.paths import REPO_ROOT

U1 = {"prompt_tokens": 120, "completion_tokens": 14, "total_tokens": 134}
U2 = {"prompt_tokens": 160, "completion_tokens": 6, "total_tokens": 166}
CODE_REPLY = "I will compute it.\n```python\nanswer = 6 * 7\nprint(answer)\n```"
FINAL_REPLY = "The answer is 42."


@pytest.fixture
def server():
    with ScriptedOpenAIServer() as srv:
        yield srv


# --- names and constructors -----------------------------------------------------------


def test_upstream_names_import_from_the_package_and_from_models():
    import cave_tui
    import cave_tui.models as models

    for name in ("OpenAIServerModel", "LiteLLMModel", "Model", "ModelResponse", "TokenUsage"):
        assert getattr(cave_tui, name) is getattr(models, name)
    assert models.StreamResponse is StreamResponse


def test_importing_and_building_the_models_does_not_import_litellm():
    code = (
        "from cave_tui import OpenAIServerModel, LiteLLMModel\n"
        "OpenAIServerModel(model_id='gpt-4', api_key='k', base_url='http://127.0.0.1:1/v1')\n"
        "LiteLLMModel(model_id='m', api_key='k', custom_llm_provider='openai')\n"
        "import sys; print(any(m.startswith(('litellm', 'httpx')) for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT
    )
    assert out.stdout.strip() == "False"


def test_openai_server_model_constructor_forms():
    documented = OpenAIServerModel(
        model_id="gpt-4", api_key="your-api-key", base_url="https://api.openai.com/v1"
    )
    assert (documented.model_id, documented.api_key) == ("gpt-4", "your-api-key")
    assert documented.base_url == "https://api.openai.com/v1"
    positional = OpenAIServerModel("m", "http://h/v1", "k", "org-1", "proj-1", temperature=0)
    assert (positional.base_url, positional.api_key) == ("http://h/v1", "k")
    assert (positional.organization, positional.project) == ("org-1", "proj-1")
    assert positional.kwargs["temperature"] == 0
    bare = OpenAIServerModel("gpt-4o")  # the OpenAI client's environment applies
    assert bare.base_url is None and bare.api_key is None
    assert isinstance(bare, Model) and isinstance(bare, OpenAIHTTPModel)  # the light client


def test_litellm_model_constructor_forms():
    readme = LiteLLMModel(model_id="model-id", api_key="your-api-key", custom_llm_provider="openai")
    assert readme.kwargs == {"custom_llm_provider": "openai"}
    gemini = LiteLLMModel(model_id="gemini/gemini-pro", api_key="your-api-key")
    assert gemini.model_id == "gemini/gemini-pro" and gemini.base_url is None
    example = LiteLLMModel(
        model_id="m", api_key="k", base_url="http://h/v1", custom_llm_provider="openai"
    )
    assert example.base_url == example.api_base == "http://h/v1"
    positional = LiteLLMModel("m", "http://h/v1", "k")  # upstream's order: base_url, api_key
    assert (positional.base_url, positional.api_key) == ("http://h/v1", "k")
    cave = LiteLLMModel("openai/m", api_key="k", api_base="http://h/v1", max_retries=1)
    assert cave.base_url == "http://h/v1" and cave.max_retries == 1
    with pytest.raises(ValueError, match="disagree"):
        LiteLLMModel("m", base_url="http://a/v1", api_base="http://b/v1")


def test_token_usage_and_model_response_as_upstream():
    total = TokenUsage(prompt_tokens=3, completion_tokens=2, total_tokens=5) + TokenUsage(1, 1, 2)
    assert (total.prompt_tokens, total.completion_tokens, total.total_tokens) == (4, 3, 7)
    response = ModelResponse(content="hi")
    assert response.token_usage == TokenUsage() and response.finish_reason is None


# --- OpenAIServerModel over HTTP ------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_openai_server_model_drives_an_agent_turn(server, stream):
    server.script.extend([("reply", CODE_REPLY, "stop", U1), ("reply", FINAL_REPLY, "stop", U2)])
    model = OpenAIServerModel(
        model_id="qwen2.5-coder",
        api_key="sk-local",
        base_url=server.base_url,
        organization="org-7",
        project="proj-9",
        stream=stream,
    )
    runtime = IPythonRuntime()
    response = await CaveAgent(model, runtime=runtime).run("What is six times seven?")
    assert response.status is AgentStatus.COMPLETED
    assert response.content == FINAL_REPLY
    assert await runtime.retrieve("answer") == 42
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (280, 20)
    first = server.requests[0]
    assert first["model"] == "qwen2.5-coder"  # no provider prefix reaches the server
    assert first["stop"] == ["\n```\n"] and bool(first.get("stream")) is stream
    headers = server.headers[0]
    assert headers["authorization"] == "Bearer sk-local"
    assert headers["openai-organization"] == "org-7" and headers["openai-project"] == "proj-9"


async def test_a_router_style_model_id_is_sent_whole(server):
    server.script.append(("reply", "ok", "stop", U1))
    model = OpenAIServerModel("openai/gpt-4o-mini", base_url=server.base_url, api_key="k")
    response = await model.call([{"role": "user", "content": "hi"}])
    assert server.requests[0]["model"] == "openai/gpt-4o-mini"
    assert isinstance(response, ModelResponse)
    assert (response.content, response.finish_reason) == ("ok", "stop")
    assert response.token_usage.total_tokens == 134


async def test_litellm_model_with_custom_llm_provider_reaches_the_server(server):
    server.script.append(("reply", FINAL_REPLY, "stop", U1))
    model = LiteLLMModel(
        model_id="local-model",
        api_key="k",
        base_url=server.base_url,
        custom_llm_provider="openai",
    )
    response = await CaveAgent(model).run("Say the answer")
    assert response.content == FINAL_REPLY
    assert server.requests[0]["model"] == "local-model"


# --- a Model subclass written to upstream's interface ---------------------------------


class ReplayStream(StreamResponse):
    """Yields one reply in small pieces, then reports usage, as upstream's streams do."""

    def __init__(self, reply: str, usage: TokenUsage | None) -> None:
        super().__init__()
        self._pieces = [reply[i : i + 5] for i in range(0, len(reply), 5)]
        self._usage = usage

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        if not self._pieces:
            self.finish_reason = "stop"
            if self._usage is not None:
                self.usage = self._usage
            raise StopAsyncIteration
        return self._pieces.pop(0)


class UpstreamStyleModel(Model):
    """A custom model as upstream's `Model` defines one: `call` and `stream`, messages only."""

    def __init__(self, replies: List[str], report_usage: bool = True):  # noqa: UP006
        self.replies = list(replies)
        self.report_usage = report_usage
        self.seen: List[List[Dict[str, str]]] = []  # noqa: UP006

    def _next(self, messages: List[Dict[str, str]]) -> str:  # noqa: UP006
        self.seen.append(messages)
        return self.replies.pop(0)

    async def call(self, messages: List[Dict[str, str]]) -> ModelResponse:  # noqa: UP006
        return ModelResponse(content=self._next(messages), token_usage=TokenUsage(10, 5, 15))

    def stream(self, messages: List[Dict[str, str]]) -> StreamResponse:  # noqa: UP006
        usage = TokenUsage(10, 5, 15) if self.report_usage else None
        return ReplayStream(self._next(messages), usage)


async def test_an_upstream_style_model_drives_an_agent_turn():
    # The first reply runs on past its code block, as a model without `stop` does.
    model = UpstreamStyleModel([CODE_REPLY + "\nOutput: 42\nThe answer is 42.", FINAL_REPLY])
    runtime = IPythonRuntime()
    agent = CaveAgent(model, runtime=runtime)
    events = [e async for e in agent.stream_events("What is six times seven?")]
    assert events[-2].type is EventType.FINAL_RESPONSE
    assert events[-2].content == FINAL_REPLY
    assert await runtime.retrieve("answer") == 42
    assert len(model.seen) == 2
    # The text past the code block was cut where a server's stop would have cut it.
    assert "Output: 42" not in model.seen[1][-2]["content"]
    text = "".join(e.content for e in events if e.type is EventType.TEXT)
    assert "Output: 42" not in text
    usage = [e for e in events if e.type is EventType.USAGE]
    assert [(u.prompt_tokens, u.completion_tokens, u.reported) for u in usage] == [
        (10, 5, True),
        (10, 5, True),
    ]


async def test_an_upstream_style_model_without_usage_is_counted_locally():
    model = UpstreamStyleModel([FINAL_REPLY], report_usage=False)
    response = await CaveAgent(model).run("Say hi")
    assert response.content == FINAL_REPLY
    assert response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0


async def test_stop_and_temperature_are_not_passed_to_a_model_that_does_not_take_them():
    model = UpstreamStyleModel(["a\n```\nb"])
    items = [i async for i in stream_items(model, [], stop=["\n```\n"], temperature=0.3)]
    # A TypeError would have been raised had either option been passed.
    assert "".join(i.text for i in items[:-1]) == "a"
    assert items[-1].finish_reason == "stop"


async def test_options_go_to_a_model_whose_signature_names_them():
    class StopAware(Model):
        def __init__(self):
            self.got = None

        async def call(self, messages):
            raise NotImplementedError

        def stream(self, messages, stop=None):
            self.got = stop
            return ReplayStream("x\n```\ny", None)

    model = StopAware()
    items = [i async for i in stream_items(model, [], stop=["\n```\n"], temperature=0.3)]
    assert model.got == ["\n```\n"]
    assert "".join(i.text for i in items[:-1]) == "x\n```\ny"  # the model's stop, not ours


async def test_an_upstream_style_model_error_ends_the_run_with_status_error():
    class Failing(UpstreamStyleModel):
        def stream(self, messages):
            raise ConnectionError("endpoint unreachable")

    response = await CaveAgent(Failing([])).run("hi")
    assert response.status is AgentStatus.ERROR
    assert "endpoint unreachable" in (response.error or "")


async def test_cave_models_answer_upstream_call():
    response = await ScriptedModel(["hello there"]).call([{"role": "user", "content": "hi"}])
    assert response.content == "hello there" and response.finish_reason == "stop"
    assert response.token_usage.completion_tokens > 0


def test_stop_cutter_finds_a_stop_split_across_pieces():
    cutter = StopCutter(["\n```\n"])
    out = [cutter.feed(p) for p in ["```python\nx = 1", "\n`", "``\nafter"]]
    assert "".join(out) + cutter.rest() == "```python\nx = 1"
    assert cutter.stopped
    plain = StopCutter(["STOP"])
    assert plain.feed("abc") + plain.feed("de") + plain.rest() == "abcde"
