"""`AppStart`: the runtime's start once the app is on screen, and what follows it.

The runtime (IPython's import) is built only once the first frame is drawn and the input
takes keys, after `start_delay` of idle time (typing pushes it back): its import competes
for the GIL with the first paint. Once it is up: the resumed transcript, the notices, the
inspector, then `cave demo`'s replay or tasks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.timer import Timer

from cave_tui.frontends.tui.messages import ServicesReady, StartFailed

if TYPE_CHECKING:
    from cave_tui.frontends.tui.host import CaveHost

MEMORY_REFRESH = 2.0  # seconds between updates of the runtime's memory in the status line
STARTUP_DELAY = 0.3  # idle time before the runtime is built (typing pushes it back)


class AppStart:
    """Starts the app's services once, when the screen is idle, and settles the screen after."""

    def __init__(self, app: CaveHost, delay: float = STARTUP_DELAY) -> None:
        self.app = app
        self.delay = delay
        self._timer: Timer | None = None
        self._memory_timer: Timer | None = None

    def begin(self) -> None:
        """The app is mounted: start after `delay` of idle time (at once with no delay)."""
        if self.delay > 0:
            self._timer = self.app.set_timer(self.delay, self._when_idle)
        else:
            self.start()

    def typed(self) -> None:
        """The user types before the start: push it back."""
        if self._timer is not None:
            self._timer.reset()

    def _when_idle(self) -> None:
        self._timer = None
        self.start()

    def start(self) -> None:
        self.app.run_worker(self._start(), group="startup", exit_on_error=False)

    async def _start(self) -> None:
        try:
            await self.app.services.start()
        except Exception as exc:
            self.app.post_message(StartFailed(f"{type(exc).__name__}: {exc}"))
            return
        finally:
            self.app.call_later(self._loads_done)
        self.app.post_message(ServicesReady())

    def _loads_done(self) -> None:
        """The start's loads (`--resume`, `--load`, `--inject`) ended: their bars go."""
        if self.app.loads.running:
            self.app.loads.finish()
            self.app.refresh_bindings()

    def ready(self) -> None:
        """The runtime is up: the resumed transcript and the notices, then the first runs."""
        app, services = self.app, self.app.services
        app.draw_transcript(services.transcript)
        services.transcript.clear()
        app.chat.add_notice(services.boundary_notice, "dim")
        for notice in services.notices:
            app.chat.add_notice(notice, "warning")
        services.notices.clear()
        app.update_status()
        if self._memory_timer is None:  # the runtime's memory in the status line, kept current
            self._memory_timer = app.set_interval(MEMORY_REFRESH, app.update_status)
        app.refresh_inspector()
        if app.startup_replay is not None:
            folder, speed, trust = app.startup_replay
            app.startup_replay = None
            app.replay_session(folder, speed=speed, trust=trust)
        elif app.startup_tasks and services.model is not None:
            tasks, app.startup_tasks = app.startup_tasks, []
            app.run_lines(tasks)
