"""Where a reply's first code block ends is read once, by the streaming parser (0.8's).

Generation stops where the parser completes the reply's first block, not at the first
line that is three backticks: a ``` line inside a triple-quoted string and an empty
fence before the real block no longer end the reply, and the cell run is the block the
parser read. Replies come from a model that applies its stops as a server does (one
written to upstream's interface: cave applies them while reading) and from cave's own
scripted model (which would send them to a server).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from cave_tui.agent.core import CaveAgent
from cave_tui.agent.events import CodeEvent, ExecutionErrorEvent, ExecutionOutputEvent
from cave_tui.agent.extraction import extract_code
from cave_tui.models.scripted import ScriptedModel
from cave_tui.parsing import SegmentType, StreamingTextParser
from cave_tui.runtime import IPythonRuntime


class ServerLikeModel:
    """Replies in small pieces through upstream's interface: the agent's stop applies."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.calls = 0

    async def call(self, messages: list[dict[str, str]]) -> str:
        raise NotImplementedError

    async def stream(self, messages: list[dict[str, str]]) -> AsyncIterator[str]:
        text = self.replies[self.calls]
        self.calls += 1
        for start in range(0, len(text), 7):
            yield text[start : start + 7]


@pytest.fixture
def runtime() -> IPythonRuntime:
    return IPythonRuntime()


async def _events(agent: CaveAgent) -> list[object]:
    return [event async for event in agent.stream_events("go")]


async def test_a_fence_line_inside_a_triple_quoted_string_does_not_end_the_reply(runtime):
    reply = '```python\npayload = """embedded markdown:\n```\nstill data"""\nprint(payload)\n```'
    agent = CaveAgent(ServerLikeModel([reply, "done"]), runtime, max_steps=2)

    events = await _events(agent)

    assert not [e for e in events if isinstance(e, ExecutionErrorEvent)]
    outputs = [e.content for e in events if isinstance(e, ExecutionOutputEvent)]
    assert "still data" in "".join(outputs)


async def test_an_empty_fence_before_the_real_block_does_not_end_the_reply(runtime):
    reply = "Let me start.\n```python\n```\nOops, real code:\n```python\nmarker = 'ran'\n```"
    agent = CaveAgent(ServerLikeModel([reply, "done"]), runtime, max_steps=2)

    events = await _events(agent)

    assert [e.code for e in events if isinstance(e, CodeEvent)] == ["marker = 'ran'"]
    assert await runtime.retrieve("marker") == "ran"


async def test_the_reply_ends_where_the_parser_closes_the_first_block(runtime):
    """A model that would take a server stop is cut by the same reading: what follows
    the block (a predicted output, a second block) is neither kept nor run."""
    model = ScriptedModel(
        ["Here:\n```python\nx = 1\n```\nThe output is 1.\n```python\nx = 2\n```", "Done."]
    )
    agent = CaveAgent(model, runtime, max_steps=2)

    await agent.run("go")

    assert agent.history[1]["content"] == "Here:\n```python\nx = 1\n```"
    assert await runtime.retrieve("x") == 1


async def test_a_string_holding_a_fence_line_reaches_a_server_model_whole(runtime):
    reply = '```python\ndoc = """a\n```\nb"""\n```\nThe output is a.'
    model = ScriptedModel([reply, "Done."])
    agent = CaveAgent(model, runtime, max_steps=2)

    await agent.run("go")

    assert await runtime.retrieve("doc") == "a\n```\nb"
    assert agent.history[1]["content"] == '```python\ndoc = """a\n```\nb"""\n```'


@pytest.mark.parametrize(
    ("reply", "cell"),
    [
        ("Here it is: ```python\nx = 1\n```", "x = 1"),  # opened inside a sentence
        ("1. Set it:\n```python\nx = 1\n    ```", "x = 1"),  # closed by an indented fence
        ("```python\n   x = 6 * 7\n   print(x)\n   ```", "x = 6 * 7\nprint(x)"),  # indented
    ],
)
def test_the_cell_is_the_block_the_parser_reads(reply, cell):
    parser = StreamingTextParser()
    read = parser.process_chunk(reply) + parser.flush()

    assert [s.content for s in read if s.type is SegmentType.CODE] == [cell]
    assert extract_code(reply) == cell


async def test_a_block_opened_inside_a_sentence_runs(runtime):
    agent = CaveAgent(ServerLikeModel(["Here it is: ```python\nx = 5\n```", "done"]), runtime)

    await agent.run("go")

    assert await runtime.retrieve("x") == 5
