"""The status line: model, runtime and its memory, policy, approval, step, tokens in/out,
cost, elapsed."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from cave_tui.printable import printable_line

if TYPE_CHECKING:
    from textual.timer import Timer

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 10_000 else f"{n:,}"


class StatusLine(Static):
    """One line of facts; ticks once a second while a turn runs (unless animation is off)."""

    model = reactive("no model")
    runtime = reactive("starting…")
    memory = reactive("")  # the runtime's memory, e.g. "129 MiB of 12.0 GiB"
    policy = reactive("standard")
    approve = reactive("auto")
    step = reactive(0)
    tokens_in = reactive(0)
    tokens_out = reactive(0)
    cost: reactive[float | None] = reactive(None)
    busy = reactive(False)
    activity = reactive("")

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
            parts.append((f" {mark} {self.activity or 'working'} ", "$text-warning"))
        else:
            parts.append((" ● ready ", "$text-success"))
        # (priority, label, value): the lowest priorities go first when the line is too narrow.
        facts = [
            (9, "", self.model),
            (7, "", self.runtime),
            (4, "policy ", self.policy),
            (5, "approve ", self.approve),
            (8, "step ", str(self.step)),
            (7, "", f"{tokens(self.tokens_in)} in / {tokens(self.tokens_out)} out tokens"),
        ]
        if self.memory:
            facts.append((3, "mem ", self.memory))
        if self.cost is not None:
            facts.append((6, "", f"${self.cost:.4f}"))
        facts.append((8, "", f"{self.elapsed:.1f}s"))
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
