"""`Conversation`: the agent's message list and the named operations that change it."""

from itertools import pairwise

from cave_tui import CaveAgent
from cave_tui.agent import events as ev
from cave_tui.agent.approval import SKIPPED_NOTE, Approved, gate
from cave_tui.agent.conversation import (
    CELL_INTERRUPTED,
    REPLY_INTERRUPTED,
    STEP_INTERRUPTED,
    Conversation,
)
from cave_tui.agent.turn import CellRecord, Turn
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime
from cave_tui.runtime.base import ExecutionResult
from cave_tui.types import UserMessage


def _roles(conversation: Conversation) -> list[str]:
    return [m["role"] for m in conversation]


def _alternates(conversation: Conversation) -> bool:
    roles = _roles(conversation)
    return all(a != b for a, b in pairwise(roles))


def test_a_turn_adds_task_reply_and_observation_in_order():
    conversation = Conversation()
    task = conversation.add_task("sum it")
    reply = conversation.add_reply("```python\nx = 1\n```")
    seen = conversation.add_observation("Ran OK")
    assert list(conversation) == [task, reply, seen]
    assert _roles(conversation) == ["user", "assistant", "user"]
    assert conversation.last is seen and len(conversation) == 3


def test_the_list_is_always_the_same_object():
    conversation = Conversation([{"role": "user", "content": "a"}])
    listed = conversation.messages
    conversation.replace([{"role": "user", "content": "b"}])
    conversation.compacted([{"role": "user", "content": "c"}])
    conversation.reset()
    assert conversation.messages is listed and listed == []


def test_replace_copies_normalises_and_leaves_the_system_message_out():
    given = [
        {"role": "system", "content": "old system prompt"},
        UserMessage(content="hi"),
        {"role": "assistant", "content": None},
    ]
    conversation = Conversation(given)
    assert list(conversation) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": ""},
    ]
    assert all(m is not given[2] for m in conversation)


def test_an_interruption_after_a_reply_ends_with_a_user_message():
    conversation = Conversation()
    conversation.add_task("t")
    conversation.add_reply("r")
    conversation.note_interruption()
    assert conversation.last == {"role": "user", "content": STEP_INTERRUPTED}
    assert _alternates(conversation)
    conversation.note_interruption()  # already ends with a user message: no change
    assert len(conversation) == 3


def test_an_interruption_of_an_empty_conversation_adds_nothing():
    conversation = Conversation()
    conversation.note_interruption()
    assert len(conversation) == 0


def test_a_cut_reply_is_marked_and_an_empty_one_is_not_kept():
    conversation = Conversation()
    conversation.add_task("t")
    conversation.add_cut_reply("")
    assert len(conversation) == 1
    conversation.add_cut_reply("partial")
    assert conversation.last == {"role": "assistant", "content": "partial" + REPLY_INTERRUPTED}
    assert conversation.note_cell_interrupted()["content"] == CELL_INTERRUPTED


def test_retract_drops_the_reply_and_amends_the_message_before_it_in_place():
    conversation = Conversation()
    conversation.add_task("t")
    conversation.add_reply("code")
    observation = conversation.add_observation("failed")
    conversation.add_reply("same code")
    assert conversation.retract_reply("do not resend")
    assert conversation.last is observation  # identity kept: a cell holding it finds it
    assert observation["content"] == "failed\ndo not resend"
    conversation.add_reply("same code")
    assert conversation.retract_reply("do not resend")
    assert observation["content"] == "failed\ndo not resend"  # the note once
    assert _alternates(conversation)


def test_retract_changes_nothing_unless_the_conversation_ends_with_a_reply():
    only_reply = Conversation([{"role": "assistant", "content": "r"}])
    assert not only_reply.retract_reply("n") and len(only_reply) == 1
    ends_with_user = Conversation([{"role": "user", "content": "t"}])
    assert not ends_with_user.retract_reply("n")
    assert list(ends_with_user) == [{"role": "user", "content": "t"}]


def test_rewind_keeps_what_it_is_told_to_and_replaces_the_request():
    conversation = Conversation([{"role": "user", "content": "earlier"}])
    request = conversation.add_task("task")
    good = [conversation.add_reply("ok code"), conversation.add_observation("Ran OK")]
    conversation.add_reply("bad code")
    conversation.add_observation("Error")
    new = conversation.rewind(request, good, "task, with a hint")
    assert new is not None and new is not request
    assert list(conversation) == [{"role": "user", "content": "earlier"}, new, *good]
    assert conversation.messages[2] is good[0]
    assert conversation.rewind(request, [], "again") is None  # the old request is gone


def test_over_edits_the_list_it_is_given():
    messages = [{"role": "user", "content": "a"}]
    conversation = Conversation.over(messages)
    conversation.add_reply("b")
    assert messages[-1] == {"role": "assistant", "content": "b"}


def test_a_turn_can_rewind_after_a_retract_that_amended_its_request():
    """The first reply of a turn retracted: the note goes on the request itself, which
    keeps its identity, so the turn's later rewind still finds its request."""
    conversation = Conversation()
    request = conversation.add_task("task")
    turn = Turn("task", request, conversation, IPythonRuntime())
    conversation.add_reply("resent code")
    turn.refuse("resent code", 1, "note", retract=True)
    assert list(conversation) == [{"role": "user", "content": "task\nnote"}]
    reply = conversation.add_reply("ok code")
    seen = conversation.add_observation("Ran OK")
    turn.record(CellRecord("ok code", ExecutionResult(success=True), 2, messages=[reply, seen]))
    assert turn.rewind("task, again")
    assert _roles(conversation) == ["user", "assistant", "user"]
    assert conversation.messages[0]["content"] == "task, again"


def test_agent_history_is_the_conversations_list_and_assignable():
    agent = CaveAgent(ScriptedModel([]), IPythonRuntime(), display=False)
    agent.history.append({"role": "user", "content": "hi"})  # upstream-era direct edit
    assert list(agent.conversation) == [{"role": "user", "content": "hi"}]
    listed = agent.history
    agent.history = [{"role": "system", "content": "s"}, {"role": "user", "content": "new"}]
    assert agent.history is listed and listed == [{"role": "user", "content": "new"}]
    agent.reset_history()
    assert agent.history == [] and len(agent.conversation) == 0


async def test_gate_ends_with_approved_or_nothing_when_skipped():
    async def keep(code: str) -> str | None:
        return code

    async def skip(code: str) -> str | None:
        return None

    conversation = Conversation()
    items = [item async for item in gate(keep, "x = 1", 1, conversation)]
    assert items == [Approved("x = 1")] and len(conversation) == 0
    items = [item async for item in gate(skip, "x = 1", 1, conversation)]
    assert [type(i) for i in items] == [ev.NoticeEvent]
    assert conversation.last == {"role": "user", "content": SKIPPED_NOTE}
