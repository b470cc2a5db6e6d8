"""`TurnRunner`: runs the app's turns, `!` cells and replays in its "agent" worker.

The worker never touches a widget: it posts an `AgentEvent` per event and a `TurnFinished`
at the end, and the app draws them on its own message loop (Harlequin's pattern).
Cancelling the worker (Esc, Ctrl+C) cancels the turn; the core interrupts a running cell.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING

from cave_tui.agent import events as ev
from cave_tui.app.services import NO_MODEL_HELP, AppServices
from cave_tui.frontends.tui.messages import AgentEvent, ReplayFinished, TurnFinished, TurnOutcome

if TYPE_CHECKING:
    from cave_tui.agent.approval import ApprovalRequest
    from cave_tui.frontends.tui.host import CaveHost


class TurnRunner:
    """Starts the app's runs (one at a time, in the "agent" worker group) and says their end."""

    def __init__(self, app: CaveHost) -> None:
        self.app = app
        self.services: AppServices = app.services

    def _run(self, work: Coroutine[None, None, None], activity: str) -> None:
        self.app.busy = True
        self.app.status.activity = activity
        self.app.run_worker(work, group="agent", exclusive=True, exit_on_error=False)

    def start_turn(self, task: str) -> None:
        """Give *task* to the agent; events come back as `AgentEvent` messages."""
        activity = "starting" if not self.services.ready else "thinking"
        self._run(self._consume(self.services.stream(task)), activity)

    def run_python(self, code: str) -> None:
        """Run *code* in the namespace without the model (the `!` prefix)."""
        if code.strip():
            self._run(self._consume(self.services.run_python(code)), "running your code")

    def replay(self, events: AsyncIterable[ev.Event]) -> None:
        """Render an event stream as a live turn (cancellable like one); events go to the hooks."""
        self._run(self._consume(_emitting(events, self.services)), "replaying")

    def replay_session(self, folder: Path, *, speed: float = 1.0, trust: bool = False) -> None:
        """Replay a recorded session here (recorded replies, live code), then continue live."""
        self._run(self._replay_session(folder, speed, trust), "replaying")

    async def _replay_session(self, folder: Path, speed: float, trust: bool) -> None:
        from cave_tui.session import replay_session

        app = self.app

        def render(event: ev.Event) -> None:
            self.services.emit(event)
            app.post_message(AgentEvent(event))

        outcome = TurnOutcome.DONE
        try:
            await self.services.start()
            result = await replay_session(
                folder, runtime=self.services.runtime, render=render, speed=speed, trust=trust
            )
            self.services.continue_from(result.agent)
            app.post_message(ReplayFinished(result.report(), result.ok))
        except asyncio.CancelledError:
            cancelled = ev.CancelledEvent(content="Replay interrupted: the namespace is kept.")
            app.post_message(AgentEvent(cancelled))
            app.post_message(TurnFinished(TurnOutcome.CANCELLED))
            raise
        except Exception as exc:
            error = ev.ErrorEvent(content=f"cannot replay {folder}: {exc}", kind="replay")
            app.post_message(AgentEvent(error))
            outcome = TurnOutcome.ERROR
        app.post_message(TurnFinished(outcome))

    def replay_finished(self, message: ReplayFinished) -> None:
        """The replay's report; then the app continues live (or says how to)."""
        chat = self.app.chat
        chat.add_notice(message.report, "success" if message.ok else "warning")
        self.app.refresh_inspector()
        if self.services.model is None:
            chat.add_notice(
                "The replay is over and its data is live in the namespace: `!` runs Python. "
                + NO_MODEL_HELP.replace(" To try cave without a key, run `cave demo`.", ""),
                "warning",
            )
        else:
            chat.add_notice(f"Continuing live with {self.services.model_label}.", "info")

    async def _consume(self, events: AsyncIterable[ev.Event]) -> None:
        app = self.app
        outcome = TurnOutcome.DONE
        try:
            async for event in events:
                app.post_message(AgentEvent(event))
        except asyncio.CancelledError:
            cancelled = ev.CancelledEvent(content="Interrupted: the partial output is kept.")
            self.services.emit(cancelled)
            app.post_message(AgentEvent(cancelled))
            app.post_message(TurnFinished(TurnOutcome.CANCELLED))
            raise
        except Exception as exc:
            error = ev.ErrorEvent(content=f"{type(exc).__name__}: {exc}", kind="app")
            self.services.emit(error)
            app.post_message(AgentEvent(error))
            outcome = TurnOutcome.ERROR
        app.post_message(TurnFinished(outcome))

    async def approve(self, request: ApprovalRequest) -> str | None:
        """Approval mode: the user's answer for a step's code (its edit, or None to skip)."""
        from cave_tui.frontends.tui.screens.approve import ApprovalScreen
        from cave_tui.frontends.tui.screens.base import ask_screen

        self.app.status.approving = True
        try:
            return await ask_screen(self.app, ApprovalScreen(request.code, request.step))
        finally:
            self.app.status.approving = False


async def _emitting(
    events: AsyncIterable[ev.Event], services: AppServices
) -> AsyncIterator[ev.Event]:
    async for event in events:
        services.emit(event)
        yield event
