"""While the model writes, the status line shows the time to its first token, the tokens
so far and the tokens per second (issue 34, item 4), from a scripted model held mid-stream."""

from __future__ import annotations

from cave_tui.app.config import Config
from cave_tui.app.services import AppServices
from cave_tui.frontends.tui.app import CaveApp
from cave_tui.models.base import rate
from cave_tui.models.tokens import count_text

from .conftest import settle, wait_for
from .test_status_line import GatedModel, status_text

REPLY = "one two three four five six seven eight nine ten " * 3


async def test_first_token_tokens_so_far_and_speed_while_the_model_writes():
    clock = {"now": 100.0}
    model = GatedModel([REPLY])
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
    seen: list[str] = []
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(pilot)
        app.prompt.text = "count"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: "reading the prompt" in status_text(app))
        streamed = app.status.streamed

        def chunk_after_a_quarter_second(text: str) -> None:
            clock["now"] += 0.25
            streamed(text)
            seen.append(text)

        app.status.streamed = chunk_after_a_quarter_second  # type: ignore[method-assign]
        clock["now"] += 1.0
        model.answer.set()
        await wait_for(pilot, lambda: "".join(seen).strip() == REPLY.strip())  # held: no end
        app.status.refresh()
        text = status_text(app)
        so_far = app.status.tokens_so_far
        assert so_far == sum(count_text(t) for t in seen) and so_far >= 30
        assert "first token 1.2s" in text, text
        assert f"{so_far} tokens" in text, text
        assert app.status.speed is not None and f"~{rate(app.status.speed)} tok/s" in text
        model.finish.set()
        await settle(pilot)
