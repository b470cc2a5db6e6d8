"""`Conversation`: the agent's message list, changed only through named operations.

The list holds message objects (`cave_tui.messages`: each also the OpenAI-style
`{"role", "content"}` dict), never the system message (the agent rebuilds it on every
call). A reply whose code the agent took is a `CodeExecutionMessage`, and every message
answering it (the cell's observation, a skipped or refused cell's note, an interruption)
an `ExecutionResultMessage`. `agent.history` is this list itself, as upstream's
users read and edit it; the loop, compaction and resume go through the operations
below, each of which states what it keeps true.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable, Iterator
from typing import Any

from cave_tui.agent.messages import typed_history
from cave_tui.messages import (
    AssistantMessage,
    CodeExecutionMessage,
    ExecutionResultMessage,
    UserMessage,
)
from cave_tui.messages import Message as ConversationMessage
from cave_tui.models.base import Message

STEP_INTERRUPTED = "[Request interrupted by user]"  # upstream 0.8's marker, word for word
CELL_INTERRUPTED = "Execution interrupted by the user."
REPLY_INTERRUPTED = "\n[interrupted by the user]"


class Conversation:
    """The messages of an agent's conversation, oldest first, without the system message."""

    def __init__(self, messages: Iterable[Any] = (), identifier: str = "python") -> None:
        self._messages: list[Message] = []
        self.identifier = identifier  # the code fence's language, to type loaded replies
        self.replace(messages)

    @classmethod
    def over(cls, messages: list[Message]) -> Conversation:
        """A conversation that edits *messages* itself (not a copy; compaction's adapter)."""
        conversation = cls()
        conversation._messages = messages
        return conversation

    @property
    def messages(self) -> list[Message]:
        """The list itself, always the same object (`agent.history`)."""
        return self._messages

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    @property
    def last(self) -> Message | None:
        return self._messages[-1] if self._messages else None

    # -- adding --------------------------------------------------------------------------
    def _add(self, message: ConversationMessage) -> Message:
        self._messages.append(message)
        return message

    def _answer(self, text: str) -> Message:
        """A user message: the result of the code reply it follows, if it follows one."""
        if type(self.last) is CodeExecutionMessage:
            return self._add(ExecutionResultMessage(text))
        return self._add(UserMessage(text))

    def add_task(self, text: str) -> Message:
        """The user's request that opens a turn; the message returned is the turn's anchor."""
        return self._add(UserMessage(text))

    def add_reply(self, text: str, code: bool = False) -> Message:
        """The model's reply: its answer, or (*code*) a reply whose code block is to run."""
        return self._add(CodeExecutionMessage(text) if code else AssistantMessage(text))

    def add_observation(self, text: str) -> Message:
        """What a cell did, as the model reads it: the user message after the reply."""
        return self._add(ExecutionResultMessage(text))

    def add_note(self, text: str) -> Message:
        """A user message telling the model something (a skipped or refused cell, a doubt
        about its answer, a resumed session's state)."""
        return self._answer(text)

    def append(self, message: object) -> None:
        """Add *message* as it is (a message object, or a dict converted); a system message
        is left out (the agent rebuilds it)."""
        typed = typed_history([*self._messages[-1:], message], self.identifier)[-1]
        if typed["role"] != "system":
            self._add(typed)

    def add_cut_reply(self, text: str) -> None:
        """The part of a reply that streamed before the user stopped it, marked as cut
        (nothing when no text came)."""
        if text:
            self._add(AssistantMessage(text + REPLY_INTERRUPTED))

    def note_interruption(self) -> None:
        """After a stopped turn (cancelled, stopped, or its event stream closed early), as
        upstream 0.8: the conversation ends with the user message `STEP_INTERRUPTED`, once
        (the result of a code reply it follows; nothing in an empty conversation). A user
        message it follows is joined with it in the next request (`merge_consecutive`)."""
        last = self.last
        marked = last is not None and last["role"] == "user" and last["content"] == STEP_INTERRUPTED
        if last is not None and not marked:
            self._answer(STEP_INTERRUPTED)

    def note_cell_interrupted(self) -> Message:
        """The observation of a cell the user stopped while it ran."""
        return self._answer(CELL_INTERRUPTED)

    # -- rewriting a turn ---------------------------------------------------------------
    def retract_reply(self, note: str) -> bool:
        """Drop the newest reply and add *note* to the message before it (once), so a
        refused resend is not fed back. The amended message keeps its identity: a turn's
        request and cells that hold it still find it. False, with nothing changed, unless
        the conversation ends with a reply that follows another message."""
        messages = self._messages
        if len(messages) < 2 or messages[-1]["role"] != "assistant":
            return False
        messages.pop()
        before = messages[-1]
        if note not in before["content"]:
            before["content"] = f"{before['content']}\n{note}"
        return True

    def rewind(self, request: Message, keep: Collection[Message], text: str) -> Message | None:
        """Drop every message after *request* but those in *keep* (by identity), and put
        *text* in a new request message in its place; the new request, or None (nothing
        changed) when *request* is no longer here (compaction replaced it)."""
        messages = self._messages
        start = next((i for i, m in enumerate(messages) if m is request), None)
        if start is None:
            return None
        kept = {id(m) for m in keep}
        messages[start + 1 :] = [m for m in messages[start + 1 :] if id(m) in kept]
        new: Message = UserMessage(text)
        messages[start] = new
        return new

    # -- replacing ----------------------------------------------------------------------
    def compacted(self, messages: list[Message]) -> None:
        """Put compaction's result in place (a summary for a span, the oldest dropped, old
        outputs cleared); the messages it kept stay the same objects."""
        self._messages[:] = messages

    def replace(self, messages: Iterable[Any]) -> None:
        """Become *messages* (message objects, kept, or dicts, converted: `typed_history`);
        a system message among them is left out (the agent rebuilds it)."""
        typed = typed_history(messages, self.identifier)
        self._messages[:] = [m for m in typed if m["role"] != "system"]

    def snapshot(self) -> list[Message]:
        """A copy of the messages, to `replace` with if what follows fails."""
        return [copy.copy(m) for m in self._messages]

    def reset(self) -> None:
        """Forget every message."""
        self._messages.clear()
