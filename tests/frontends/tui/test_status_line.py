"""The status line says what the turn does (issue 31, item 9): reading the prompt, then the
time to the first token and a live speed; waiting for your approval; lines queued; the
state outlives the settings when the terminal narrows; the layout fits the first paint."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from cave_tui.app.config import Config
from cave_tui.app.services import AppServices
from cave_tui.frontends.tui.app import CaveApp
from cave_tui.frontends.tui.screens.approve import ApprovalScreen
from cave_tui.models import ScriptedModel
from cave_tui.models.base import Completion, rate

from .conftest import make_app, settle, wait_for

LOCAL_LABEL = "local:qwen2.5-coder-1.5b-instruct (embedded, 12 tok/s)"


class GatedModel(ScriptedModel):
    """A scripted model that reads the prompt until `answer` is set, then streams a word a
    chunk, and holds its completion until `finish`."""

    def __init__(self, replies: list[Any]) -> None:
        super().__init__(replies, chunk_words=1)
        self.answer = asyncio.Event()
        self.finish = asyncio.Event()

    async def stream(self, messages: Any, **kwargs: Any) -> AsyncIterator[Any]:
        await self.answer.wait()
        async for item in super().stream(messages, **kwargs):
            if isinstance(item, Completion):
                await self.finish.wait()
            yield item


def status_text(app: Any) -> str:
    return str(app.status.render())


async def test_reading_the_prompt_then_first_token_and_a_live_speed():
    clock = {"now": 100.0}
    model = GatedModel(["one two three four five six seven eight nine ten " * 3])
    services = AppServices(Config(kernel=False), model=model)
    app = CaveApp(
        services,
        animate=False,
        clock=lambda: clock["now"],
        history_file=None,
        persist_settings=False,
        start_delay=0,
        answer_grace=0,
    )
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        app.prompt.text = "count"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: "reading the prompt" in status_text(app))
        streamed = app.status.streamed

        def chunk_after_a_quarter_second(text: str) -> None:  # the clock of the app's handling
            clock["now"] += 0.25
            streamed(text)

        app.status.streamed = chunk_after_a_quarter_second  # type: ignore[method-assign]
        clock["now"] += 3.0
        assert "reading the prompt… 3s" in status_text(app)
        model.answer.set()
        await wait_for(pilot, lambda: "tok/s" in status_text(app))
        text = status_text(app)
        assert "reading the prompt" not in text
        assert app.status.first_token_after is not None, text
        assert app.status.first_token_after == 3.25  # asked, then a quarter second on
        assert "first token 3.2s" in text, text
        assert app.status.speed is not None and app.status.speed >= 3, text  # >= 1 word a chunk
        assert f"~{rate(app.status.speed)} tok/s" in text, text
        model.finish.set()
        await settle(pilot)
        assert "● ready" in status_text(app) and "tok/s" in status_text(app)  # last call's


async def test_the_status_line_says_it_waits_for_your_approval():
    replies = ["```python\nx = 1\n```", "Done."]
    app = make_app(replies, config=Config(kernel=False, approve="ask"))
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        app.prompt.text = "build"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        assert "waiting for your approval" in status_text(app)
        assert "running step" not in status_text(app)
        await pilot.press("ctrl+r")  # run: the dialog closes
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalScreen))
        await settle(pilot)
        assert "waiting for your approval" not in status_text(app)


async def test_runtime_and_memory_outlive_the_default_settings_when_narrow():
    for width in (120, 80):
        app = make_app()
        async with app.run_test(size=(width, 30)) as pilot:
            await settle(pilot)
            app.status.model = LOCAL_LABEL
            app.status.runtime = "kernel (sandbox)"
            app.status.memory = "129 MiB of 12.0 GiB"
            await pilot.pause()
            text = status_text(app)
            assert len(text) <= width, text
            assert "kernel (sandbox)" in text and "mem 129 MiB of 12.0 GiB" in text, text
            assert "approve auto" not in text and "policy standard" not in text, text
            if width == 120:
                assert "step 0" in text and LOCAL_LABEL in text, text
            app.config.approve = "ask"  # a setting away from its default says more
            app.update_status()
            await pilot.pause()
            assert "approve ask" in status_text(app) or width == 80


async def test_a_queued_line_is_told_in_the_status_line_not_over_the_input():
    long_cell = "```python\nimport time\nstarted = True\nwhile True:\n    time.sleep(0.05)\n```"
    app = make_app([long_cell, "The **second** answer."])
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        app.prompt.text = "loop"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "started" in app.services.runtime._ns)
        app.prompt.text = "second task"
        await pilot.press("enter")
        await pilot.pause()
        assert "1 queued" in status_text(app)
        assert not app._notifications, "a toast covers the input"
        await pilot.press("escape")
        await wait_for(pilot, lambda: "queued" not in status_text(app))


async def test_the_narrow_layout_is_there_at_the_first_paint():
    seen: list[bool] = []

    services = AppServices(Config(kernel=False), model=None)
    app = CaveApp(
        services,
        animate=False,
        clock=lambda: 0.0,
        history_file=None,
        persist_settings=False,
        start_delay=0,
        answer_grace=0,
    )
    display = app._display

    def recording(screen: Any, renderable: Any) -> None:  # the first paint's layout
        if renderable is not None and not app._batch_count and not seen:
            seen.append(screen.has_class("-narrow"))
        display(screen, renderable)

    app._display = recording  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.screen.has_class("-narrow")
    assert seen == [True]


def test_a_slow_model_s_speed_is_never_shown_as_zero():
    assert [rate(0.4), rate(7.46), rate(42.4)] == ["0.4", "7.5", "42"]
