"""Two 0.8 behaviours of a reply and a cell: a provider's usage without its total is
summed (`Model._extract_token_usage`, read by 0.8's streams), and a lone surrogate a
cell prints reaches the model, the events and JSON as U+FFFD
(`cave_tui.utils.sanitize_surrogates`)."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

from cave_tui import CaveAgent
from cave_tui.models import Model, ScriptedModel
from cave_tui.runtime import IPythonRuntime
from cave_tui.utils import sanitize_surrogates


def test_a_missing_total_is_the_sum_of_the_parts() -> None:
    parts = SimpleNamespace(usage=SimpleNamespace(prompt_tokens=1234, completion_tokens=77))
    assert Model._extract_token_usage(parts).total_tokens == 1311
    told = SimpleNamespace(
        usage=SimpleNamespace(prompt_tokens=10, completion_tokens=5, total_tokens=99)
    )
    assert Model._extract_token_usage(told).total_tokens == 99


def test_sanitize_surrogates() -> None:
    assert sanitize_surrogates("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    assert sanitize_surrogates("hello \U0001f600 \u4e16") == "hello \U0001f600 \u4e16"
    assert sanitize_surrogates("\ud83d\ude00") == "\U0001f600"  # a pair is its character
    assert sanitize_surrogates("") == ""


def test_a_cell_printing_a_lone_surrogate_gives_encodable_text() -> None:
    model = ScriptedModel(["```python\nprint('x\\ud800y')\nraise ValueError('\\udfff')\n```", "ok"])
    agent = CaveAgent(model=model, runtime=IPythonRuntime(), display=False)
    events = []

    async def run() -> None:
        async for event in agent.stream_events("go"):
            events.append(event)

    asyncio.run(run())
    texts = [m["content"] for m in agent.messages] + [str(e.content) for e in events]
    assert any("x\ufffdy" in t for t in texts)
    for text in texts:
        json.dumps(text, ensure_ascii=False).encode("utf-8")  # raises on a lone surrogate
