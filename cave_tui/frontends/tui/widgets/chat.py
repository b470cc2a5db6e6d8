"""The chat pane: user messages, agent replies streamed as Markdown, notices.

Text arrives in many small events; each reply buffers it and flushes at most every
`FLUSH_SECONDS` into its `StreamingMarkdown`, so rendering cost follows the screen
refresh rate, not the token rate. The pane keeps at most `MAX_ITEMS` entries so a
long session does not slow the layout down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import VerticalGroup, VerticalScroll
from textual.timer import Timer
from textual.widgets import Static

from cave_tui.frontends.tui.keys import SCROLL_HINT, OrderedKeys
from cave_tui.frontends.tui.widgets.copying import COPY_BINDING, Copyable, step_label
from cave_tui.printable import plain_text

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.app import ComposeResult

    from cave_tui.frontends.tui.widgets.stream_markdown import ChatMarkdown


def _markdown(text: str, dark: bool) -> ChatMarkdown:
    # Rich's Markdown (and markdown-it) load on the first message, not at app start.
    from cave_tui.frontends.tui.widgets.stream_markdown import ChatMarkdown

    return ChatMarkdown(text, dark)


FLUSH_SECONDS = 1 / 20
MAX_ITEMS = 120


class UserMessage(Static):
    """What the user typed."""

    def __init__(self, text: str) -> None:
        super().__init__(plain_text(text))
        self.text = text


class Notice(Static):
    """A line from the app or a command (Markdown allowed); `kind` picks its colour."""

    def __init__(self, text: str, kind: str = "info", *, dark: bool = True) -> None:
        super().__init__(_markdown(text, dark))
        self.text = text
        self.dark = dark
        self.add_class(f"-{kind or 'info'}")

    def set_text(self, text: str) -> None:
        self.text = text
        self.update(_markdown(text, self.dark))

    def mark(self, query: str | None) -> None:
        """Highlight *query* where the notice shows it (None: no more)."""
        from cave_tui.frontends.tui.widgets.marked import Marked

        body = _markdown(self.text, self.dark)
        self.update(Marked(body, query) if query else body)


class Answer(Copyable, Static, can_focus=True):
    """A turn's answer given by final_answer() in a cell (never streamed as prose); Ctrl+Y
    copies its text."""

    BINDINGS = [COPY_BINDING]

    def __init__(self, text: str, agent: str | None = None, *, dark: bool = True) -> None:
        # loaded already: the answer came from the agent
        from cave_tui.agent.display import answer_renderable

        body = answer_renderable(text)
        if isinstance(body, Text):  # a frame's or Series' lines, never joined into prose
            if agent:
                body = Text.assemble((f"{agent}:\n", "bold"), body)
                body.no_wrap, body.overflow = True, "fold"
        else:
            body = _markdown(f"**{agent}:** {text}" if agent else text, dark)
        super().__init__(body)
        self.body: RenderableType = body
        self.text = text
        self.agent = agent

    def mark(self, query: str | None) -> None:
        """Highlight *query* where the answer shows it (None: no more)."""
        from cave_tui.frontends.tui.widgets.marked import Marked

        self.update(Marked(self.body, query) if query else self.body)

    def copy_text(self) -> str:
        return self.text

    def copy_label(self) -> str:
        return f"the answer of {self.agent}" if self.agent else "the answer"


class EditNote(Static):
    """Under a reply: the code the user edited it to in approval mode (what really ran)."""

    def __init__(self, code: str, *, dark: bool = True) -> None:
        fence = "````" if "```" in code else "```"
        note = f"**Edited by you; this ran instead:**\n\n{fence}python\n{code.rstrip()}\n{fence}"
        super().__init__(_markdown(note, dark), classes="reply-edit")
        self.code = code


class AgentMessage(Copyable, VerticalGroup, can_focus=True):
    """One model reply (one step), streamed in; a status line is added when its code ran.
    Ctrl+Y copies its text (the Markdown the model wrote)."""

    BINDINGS = [COPY_BINDING]

    def __init__(self, step: int, agent: str | None = None, *, dark: bool = True) -> None:
        super().__init__()
        self.step = step
        self.agent = agent
        from cave_tui.frontends.tui.widgets.stream_markdown import StreamingMarkdown

        self.markdown = StreamingMarkdown(dark=dark)
        self.status = Static("", classes="reply-status")
        self.status.display = False
        self._pending: list[str] = []
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        if self.agent:  # a sub-agent is speaking: say which
            label = plain_text(f"{self.agent} · step {self.step}", one_line=True)
            yield Static(label, classes="reply-label")
        yield self.markdown
        yield self.status

    def feed(self, text: str) -> None:
        """Queue *text*; it is rendered on the next flush."""
        self._pending.append(text)
        if self._timer is None:
            self._timer = self.set_timer(FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        """Render everything queued so far."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        self.markdown.append(text)

    @property
    def text(self) -> str:
        """Everything received, rendered or still queued."""
        return self.markdown.source + "".join(self._pending)

    def copy_text(self) -> str:
        return self.text

    def copy_label(self) -> str:
        return f"the reply of {step_label(self.step, self.agent)}"

    def mark(self, query: str | None) -> None:
        """Highlight *query* where the reply shows it (None: no more)."""
        self.flush()
        self.markdown.mark(query)

    def show_edit(self, code: str) -> None:
        """The user edited this reply's code before it ran: show what runs instead."""
        self.flush()
        self.mount(EditNote(code, dark=self.markdown.dark), before=self.status)

    def set_status(self, text: str, kind: str = "info") -> None:
        self.status.update(plain_text(text))  # names a kernel error type
        self.status.set_classes(f"reply-status -{kind}")
        self.status.display = True


class ChatPane(OrderedKeys, VerticalScroll):
    """The conversation, newest at the bottom; follows new content unless scrolled up.
    Focused (Shift+Tab), the arrows, PgUp/PgDn, Home/End scroll it; text typed goes to
    the input (`OrderedKeys`)."""

    BINDINGS = [SCROLL_HINT]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.dark = True
        self.replies: dict[tuple[str | None, int], AgentMessage] = {}

    def on_mount(self) -> None:
        self.anchor()

    def _add(self, widget: Static | VerticalGroup) -> None:
        self.mount(widget)
        extra = len(self.children) - MAX_ITEMS
        if extra > 0:
            old = list(self.children[:extra])
            for child in old:
                if isinstance(child, AgentMessage):
                    self.replies.pop((child.agent, child.step), None)
            self.remove_children(old)

    def add_user(self, text: str) -> UserMessage:
        message = UserMessage(text)
        self._add(message)
        self.replies.clear()
        return message

    def add_notice(self, text: str, kind: str = "info") -> Notice:
        notice = Notice(text, kind, dark=self.dark)
        self._add(notice)
        return notice

    def add_answer(self, text: str, agent: str | None = None) -> Answer:
        answer = Answer(text, agent, dark=self.dark)
        self._add(answer)
        return answer

    def reply(self, step: int, agent: str | None = None) -> AgentMessage:
        """The reply for *step* (created on first use)."""
        key = (agent, step)
        message = self.replies.get(key)
        if message is None:
            message = AgentMessage(step, agent, dark=self.dark)
            self.replies[key] = message
            self._add(message)
        return message

    def existing_reply(self, step: int, agent: str | None = None) -> AgentMessage | None:
        return self.replies.get((agent, step))

    def flush_all(self) -> None:
        for message in self.query(AgentMessage):
            message.flush()

    def clear(self) -> None:
        self.replies.clear()
        self.remove_children()

    def restyle(self, dark: bool) -> None:
        self.dark = dark
        for message in self.query(AgentMessage):
            message.markdown.restyle(dark)
        for notice in self.query(Notice):
            notice.update(_markdown(notice.text, dark))
        for answer in self.query(Answer):
            text = f"**{answer.agent}:** {answer.text}" if answer.agent else answer.text
            answer.update(_markdown(text, dark))
