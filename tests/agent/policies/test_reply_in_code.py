"""ReplyInCode: where the model continues a reply it is given, each reply begins with the
code fence (the request ends with it as the assistant's message), the fence is part of the
reply the loop reads, and the user is told once a turn; a model that cannot continue a
reply (hosted APIs, upstream's models) gets the request unchanged and no event."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator

from rich.console import Console

from cave_tui.agent import CaveAgent
from cave_tui.agent.display import RichDisplay
from cave_tui.agent.events import FinalResponseEvent, InterventionEvent, InterventionKind
from cave_tui.agent.policies import PRESETS
from cave_tui.agent.streaming import _led
from cave_tui.app.console_front_end import ConsoleFrontEnd
from cave_tui.models import ScriptedModel
from cave_tui.models.base import Completion, RetryNotice, StreamItem, TextDelta, Usage
from tests.agent.policies.helpers import interventions

MEAN = "m = round(flights['dep_delay'].mean(), 2)\nfinal_answer(m)\n```"


def continuing(replies: list[str]) -> ScriptedModel:
    """A scripted model that, as llama.cpp does, continues the reply it is given."""
    model = ScriptedModel(replies)
    model.continues_reply = True
    return model


async def test_the_reply_begins_in_code_and_the_number_is_computed(runtime):
    model = continuing([MEAN])
    agent = CaveAgent(model, runtime, display=False, policies="small")
    events = [e async for e in agent.stream_events("What is the mean delay?")]
    assert model.requests[0][-1] == {"role": "assistant", "content": "```python\n"}
    assert [e.content for e in events if isinstance(e, FinalResponseEvent)] == ["7.33"]
    assert interventions(events).count(("reply_in_code", InterventionKind.LEAD)) == 1
    replies = [m for m in agent.history if m["role"] == "assistant"]
    assert replies[0]["content"].startswith("```python\nm = round(")  # the fence is its own


async def test_every_call_is_led_and_the_user_is_told_once_a_turn(runtime):
    first = "print(flights['dep_delay'].mean())\n```"
    model = continuing([first, "final_answer(7.33)\n```", "final_answer('AA')\n```"])
    agent = CaveAgent(model, runtime, display=False, policies="reply_in_code")
    events = [e async for e in agent.stream_events("Mean delay?")]
    events += [e async for e in agent.stream_events("Busiest carrier?")]
    assert all(r[-1] == {"role": "assistant", "content": "```python\n"} for r in model.requests)
    assert interventions(events) == [("reply_in_code", InterventionKind.LEAD)] * 2
    # the lead is not left in the conversation as a message of its own
    assert not any(m["content"] == "```python\n" for m in agent.history)


async def test_a_model_that_cannot_continue_a_reply_is_not_led(runtime):
    model = ScriptedModel(["```python\n" + MEAN])
    agent = CaveAgent(model, runtime, display=False, policies="small")
    events = [e async for e in agent.stream_events("What is the mean delay?")]
    assert model.requests[0][-1]["role"] == "user"
    assert ("reply_in_code", InterventionKind.LEAD) not in interventions(events)
    assert [e.content for e in events if isinstance(e, FinalResponseEvent)] == ["7.33"]


async def test_the_lead_follows_the_agents_block_identifier(runtime):
    model = continuing(["final_answer(1)\n```"])
    agent = CaveAgent(
        model, runtime, display=False, policies="reply_in_code", python_block_identifier="py"
    )
    events = [e async for e in agent.stream_events("one")]
    assert model.requests[0][-1]["content"] == "```py\n"
    assert [e.content for e in events if isinstance(e, FinalResponseEvent)] == ["1"]


async def test_a_retry_that_voids_the_text_begins_again_from_the_lead():
    async def items() -> AsyncIterator[StreamItem]:
        yield TextDelta("x = ")
        yield RetryNotice(attempt=1, delay=0.0, reason="dropped", discard_partial=True)
        yield TextDelta("x = 1\n```")
        yield Completion("stop", Usage())

    seen = [i async for i in _led(items(), "```python\n")]
    texts = [i.text for i in seen if isinstance(i, TextDelta)]
    assert texts == ["```python\n", "x = ", "```python\n", "x = 1\n```"]


def test_only_the_small_preset_has_it():
    assert "reply_in_code" in PRESETS["small"]
    assert all("reply_in_code" not in PRESETS[p] for p in ("off", "minimal", "guided", "lean"))


async def _texts(lead: str, *pieces: str) -> list[str]:
    async def items() -> AsyncIterator[StreamItem]:
        for piece in pieces:
            yield TextDelta(piece)
        yield Completion("stop", Usage())

    return [i.text for i in [i async for i in _led(items(), lead)] if isinstance(i, TextDelta)]


async def test_a_server_that_sends_the_lead_back_is_not_read_twice():
    lead = "```python\n"
    assert "".join(await _texts(lead, "```py", "thon\nx = 1", "\n```")) == lead + "x = 1\n```"
    assert "".join(await _texts(lead, "x = 1\n```")) == lead + "x = 1\n```"
    assert "".join(await _texts(lead, "`")) == lead + "`"  # short, ended while held


async def test_the_terminal_display_tells_the_lead_once_and_every_other_act(runtime):
    out = io.StringIO()
    display = RichDisplay(Console(file=out, width=200, color_system=None))
    model = continuing(["final_answer(1)\n```", "final_answer(2)\n```"])
    agent = CaveAgent(model, runtime, display=False, policies="reply_in_code")
    for task in ("one", "two"):
        async for event in agent.stream_events(task):
            display.render(event)
    assert out.getvalue().count("[reply_in_code lead]") == 1


def test_front_ends_that_make_a_display_per_turn_or_event_still_tell_the_lead_once():
    out = io.StringIO()
    front = ConsoleFrontEnd(None, Console(file=out, width=200, color_system=None))  # type: ignore[arg-type]
    for step in (1, 1):  # two turns, each told the lead
        front.render(
            InterventionEvent(
                content="Each reply", step=step, policy="reply_in_code", kind=InterventionKind.LEAD
            )
        )
    front.render(
        InterventionEvent(
            content="A doubt", step=2, policy="look_first", kind=InterventionKind.DOUBT
        )
    )
    assert out.getvalue().count("[reply_in_code lead]") == 1
    assert "[look_first doubt] A doubt" in out.getvalue()


async def test_an_agent_that_displays_its_own_runs_tells_the_lead_once(runtime, capsys):
    model = continuing(["final_answer(1)\n```", "final_answer(2)\n```"])
    agent = CaveAgent(model, runtime, display=True, policies="reply_in_code")
    for task in ("one", "two"):
        [e async for e in agent.stream_events(task)]
    assert capsys.readouterr().out.count("[reply_in_code lead]") == 1


LLAMA_CPP_PROPS = {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1}


async def test_a_local_llama_cpp_server_is_asked_once_and_its_replies_are_led(runtime):
    from cave_tui.models.openai_http import OpenAIHTTPModel
    from tests.helpers.openai_server import ScriptedOpenAIServer

    with ScriptedOpenAIServer() as srv:
        srv.props = LLAMA_CPP_PROPS
        srv.script.extend(
            [("reply", MEAN, "stop", None), ("reply", "final_answer(1)\n```", "stop", None)]
        )
        model = OpenAIHTTPModel("openai/my-model", api_base=srv.base_url, api_key="none")
        agent = CaveAgent(model, runtime, display=False, policies="small")
        events = [e async for e in agent.stream_events("What is the mean delay?")]
        events += [e async for e in agent.stream_events("And one?")]
    assert srv.gets.count("/props") == 1 and model.continues_reply
    assert all(
        r["messages"][-1] == {"role": "assistant", "content": "```python\n"} for r in srv.requests
    )
    assert [e.content for e in events if isinstance(e, FinalResponseEvent)] == ["7.33", "1"]


async def test_a_server_that_is_not_llama_cpp_or_not_local_or_a_lean_preset_is_not_led(runtime):
    from cave_tui.models.openai_http import OpenAIHTTPModel
    from tests.helpers.openai_server import ScriptedOpenAIServer

    answer = "```python\n" + MEAN
    for props, policies in ((None, "small"), ({"model": "x"}, "small"), (LLAMA_CPP_PROPS, "lean")):
        with ScriptedOpenAIServer() as srv:
            srv.props = props
            srv.script.append(("reply", answer, "stop", None))
            model = OpenAIHTTPModel("openai/my-model", api_base=srv.base_url, api_key="none")
            agent = CaveAgent(model, runtime, display=False, policies=policies)
            events = [e async for e in agent.stream_events("What is the mean delay?")]
        assert srv.requests[0]["messages"][-1]["role"] == "user", (props, policies)
        assert not model.continues_reply
        assert [e.content for e in events if isinstance(e, FinalResponseEvent)] == ["7.33"]
        assert srv.gets.count("/props") == (0 if policies == "lean" else 1)
