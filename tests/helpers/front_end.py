"""A real `CommandContext` over a front end that records what commands ask of it."""

from __future__ import annotations

from typing import Any

from cave_tui.app.commands.registry import CommandContext, FrontEnd
from cave_tui.app.config import Config
from cave_tui.app.services import AppServices


class RecordingFrontEnd:
    """A `FrontEnd` that keeps what is printed, answers questions from a script and records
    every other call as (method name, arguments)."""

    def __init__(self, answers: list[bool] | None = None) -> None:
        self.lines: list[tuple[str, str]] = []
        self.questions: list[str] = []
        self.answers = list(answers or [])
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def print(self, text: str, *, style: str = "") -> None:
        self.lines.append((text, style))

    async def confirm(self, question: str) -> bool:
        self.questions.append(question)
        return self.answers.pop(0) if self.answers else False

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or not hasattr(FrontEnd, name):
            raise AttributeError(name)  # a method the protocol does not have is an error
        return lambda *args, **kwargs: self.calls.append((name, {"args": args, **kwargs}))


class RecordingContext(CommandContext):
    """A real `CommandContext` (real `AppServices`) over a `RecordingFrontEnd`."""

    def __init__(self, agent: Any = None, answers: list[bool] | None = None) -> None:
        services = AppServices(
            Config(kernel=False),
            model=getattr(agent, "model", None),
            runtime=getattr(agent, "runtime", None),
        )
        services.agent = agent
        super().__init__(services, RecordingFrontEnd(answers))
        self.recorded: RecordingFrontEnd = self.ui  # type: ignore[assignment]

    @property
    def lines(self) -> list[tuple[str, str]]:
        return self.recorded.lines

    @property
    def questions(self) -> list[str]:
        return self.recorded.questions

    @property
    def answers(self) -> list[bool]:
        return self.recorded.answers

    @answers.setter
    def answers(self, value: list[bool]) -> None:
        self.recorded.answers = list(value)

    @property
    def requests(self) -> list[tuple[str, dict[str, Any]]]:
        return self.recorded.calls

    @property
    def last(self) -> str:
        return self.lines[-1][0]
