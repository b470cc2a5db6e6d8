"""The status line: what the turn does now (reading the prompt, writing at a live speed,
waiting for your approval), queued lines, model, runtime and its memory, policy, approval,
step, tokens in/out, cost, elapsed."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from cave_tui.models.base import rate
from cave_tui.models.tokens import count_text
from cave_tui.printable import printable_line

if TYPE_CHECKING:
    from textual.timer import Timer

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
REDRAW = 0.25  # seconds: the live speed is redrawn at most this often
SPEED_AFTER = 0.5  # seconds of streaming before a speed is shown (one chunk says nothing)


def tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 10_000 else f"{n:,}"


class StatusLine(Static):
    """One line of facts; ticks once a second while a turn runs (unless animation is off)."""

    model = reactive("no model")
    runtime = reactive("starting…")
    memory = reactive("")  # the runtime's memory, e.g. "129 MiB of 12.0 GiB"
    policy = reactive("standard")
    aids = reactive("")  # the agent's preset: "small"
    aids_why = reactive("")  # why that preset: "the embedded model, 1.5B parameters"
    approve = reactive("auto")
    step = reactive(0)
    tokens_in = reactive(0)
    tokens_out = reactive(0)
    cost: reactive[float | None] = reactive(None)
    busy = reactive(False)
    activity = reactive("")
    queued = reactive(0)  # lines sent while busy, waiting to run
    approving = reactive(False)  # the approval dialog is open

    def __init__(
        self, *, clock: Callable[[], float], animate: bool = True, id: str | None = None
    ) -> None:
        super().__init__(id=id, markup=False)
        self.clock = clock
        self.animate_ = animate
        self.started: float | None = None
        self.finished: float | None = None
        self._frame = 0
        self._ticker: Timer | None = None
        self._reading: float | None = None  # when the model was asked (until its first token)
        self._first_token: float | None = None  # when its first token came
        self._streamed = 0  # tokens streamed since, the first chunk's excluded (~cl100k)
        self.tokens_so_far = 0  # tokens of the latest model call's reply so far (~cl100k)
        self._writing = False  # the model's reply is streaming
        self._redrawn = 0.0
        self.first_token_after: float | None = None  # seconds, of the latest model call
        self.speed: float | None = None  # tokens per second, of the latest model call

    def model_called(self) -> None:
        """The model was asked: "reading the prompt…" until its first token."""
        self._reading = self.clock()
        self._first_token = None
        self._writing = False
        self._streamed = 0
        self.tokens_so_far = 0
        self.first_token_after = self.speed = None
        self.refresh()

    def streamed(self, text: str) -> None:
        """A chunk of the model's reply arrived: time to first token, then the live speed."""
        now = self.clock()
        self._writing = True
        self.tokens_so_far += count_text(text)
        if self._first_token is None:
            self._first_token = now
            started = self._reading if self._reading is not None else now
            self.first_token_after = max(0.0, now - started)
            self._reading = None
            self.refresh()
            return
        self._streamed += count_text(text)
        took = now - self._first_token
        if took >= SPEED_AFTER:
            self.speed = self._streamed / took
        if now - self._redrawn >= REDRAW:  # many chunks a second: a few redraws
            self._redrawn = now
            self.refresh()

    def reply_done(self) -> None:
        """The model's reply is complete (its code runs now, or the turn ended)."""
        self._reading = None
        self._writing = False
        self.refresh()

    def _activity(self) -> str:
        if self.approving:
            return "waiting for your approval"
        if self._reading is not None:
            return f"reading the prompt… {self.clock() - self._reading:.0f}s"
        activity = self.activity or "working"
        if self._writing:
            parts = [activity]
            if self.first_token_after is not None:
                parts.append(f"first token {self.first_token_after:.1f}s")
            parts.append(f"{tokens(self.tokens_so_far)} tokens")
            if self.speed is not None:
                parts.append(f"~{rate(self.speed)} tok/s")
            return " · ".join(parts)
        return activity

    def on_mount(self) -> None:
        if self.animate_:
            self._ticker = self.set_interval(0.25, self._tick, pause=True)

    def _tick(self) -> None:
        self._frame += 1
        self.refresh()

    def watch_busy(self, busy: bool) -> None:
        if busy:
            self.started = self.clock()
            self.finished = None
        elif self.started is not None:
            self.finished = self.clock()
        if self._ticker is not None:
            self._ticker.resume() if busy else self._ticker.pause()

    @property
    def elapsed(self) -> float:
        if self.started is None:
            return 0.0
        end = self.finished if self.finished is not None else self.clock()
        return max(0.0, end - self.started)

    def render(self) -> Content:
        parts: list[tuple[str, str] | str] = []
        if self.busy:
            mark = SPINNER[self._frame % len(SPINNER)] if self.animate_ else "●"
            parts.append((f" {mark} {self._activity()} ", "$text-warning"))
        else:
            parts.append((" ● ready ", "$text-success"))
        if self.queued:
            parts.append((f"{self.queued} queued, runs next ", "$text-accent"))
        # (priority, label, value): the lowest priorities go first when the line is too narrow.
        # The state (runtime and its memory, step, time) outlives the settings: a setting at
        # its default says least, so it goes first.
        facts = [
            (10, "", self.runtime),
            (7, "", self.model),
            (5 if self.policy != "standard" else 1, "policy ", self.policy),
            (5 if self.approve != "auto" else 2, "approve ", self.approve),
            *([(5, "aids ", self.aids)] if self.aids else []),
            # why that preset (/policies says it too): dropped before the token counts
            *([(3, "", f"({self.aids_why})")] if self.aids and self.aids_why else []),
            (8, "step ", str(self.step)),
            (4, "", f"{tokens(self.tokens_in)} in / {tokens(self.tokens_out)} out tokens"),
        ]
        if self.memory:
            facts.insert(1, (9, "mem ", self.memory))
        if self.speed is not None and not self.busy:
            facts.append((3, "", f"~{rate(self.speed)} tok/s"))
        if self.cost is not None:
            facts.append((3, "", f"${self.cost:.4f}"))
        facts.append((6, "", f"{self.elapsed:.1f}s"))
        width = self.size.width or 200
        used = sum(len(p[0]) if isinstance(p, tuple) else len(p) for p in parts)

        def length(items: list[tuple[int, str, str]]) -> int:
            return used + sum(len(label) + len(value) + 3 for _, label, value in items)

        while length(facts) > width and len(facts) > 1:
            facts.remove(min(facts, key=lambda fact: fact[0]))
        for _, label, value in facts:
            parts.append(("│ ", "dim"))
            if label:
                parts.append((label, "dim"))
            parts.append(f"{printable_line(value)} ")  # a model's or server's name
        return Content.assemble(*parts)
