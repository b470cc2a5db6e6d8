"""The lifecycle every protocol front end shares (`cave mcp`, `cave acp`).

The data features installed (`--inject`, `--load`, `--dump`, `--resume`, the recording),
the runtime started (a pre-seed that fails stops the start), the front end's server run
until its client leaves (or SIGTERM/SIGHUP, Ctrl+C), then the exit hooks (dump, session
closed), the runtime stopped and the exit lines said. The front end's protocol SDK is
imported on a worker thread while the runtime starts on this loop (a kernel boots in its
own process meanwhile), so the two overlap instead of adding up; the runtime and the
server stay this loop's. stdout is the protocol's: cave's own
lines go to stderr, printable only. The exit code is `cave run`'s: 2 when the start failed,
128+N on signal N, 3 when `--dump` could not be written.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from cave_tui.app.exits import CancelOnSignals
from cave_tui.app.startup import DataOptions, StartupError, abort_start, install
from cave_tui.printable import printable
from cave_tui.runtime.tasks import abandon

if TYPE_CHECKING:
    from cave_tui.app.services import AppServices

EXIT_INTERRUPTED = 128 + signal.SIGINT
# With `agent_later`, seconds of serving before the agent's build begins: a client's first
# requests (initialize, the tools listed, a first `run`) are answered without sharing the
# interpreter's lock with the build.
AGENT_AFTER = 1.0


def say(text: str) -> None:
    """A line on stderr (stdout is the protocol's): printable only."""
    sys.stderr.write(printable(text) + "\n")
    sys.stderr.flush()


Run = Callable[[], Awaitable[None]]  # a front end's server: serves until its client leaves


async def serve_protocol(
    services: AppServices,
    data: DataOptions,
    *,
    name: str,
    prepare: Callable[[], Run],
    agent_later: bool = False,
) -> int:
    """Start *services* with *data*, then serve until the client leaves; the exit code.
    *prepare* imports the front end (its SDK) and returns its server's `Run`: it runs on a
    worker thread while the runtime starts, and must not touch *services*; the `Run` is
    awaited on this loop once both are done (a failure of either ends the start, the runtime
    stopped). *name* is the command (`cave mcp`): it labels the session and cave's lines.
    With *agent_later* (a front end whose first answers need no agent) the agent is not
    built by the start but in the background, `AGENT_AFTER` seconds into serving, so the
    client's first answers do not share the interpreter with it; what needs it sooner
    begins it and awaits it (`AppServices.agent_ready`)."""
    features = install(services, data, label=name, announce=False)
    services.agent_after_ready = agent_later
    preparing = asyncio.ensure_future(asyncio.to_thread(prepare))
    # The start's loads (`--resume` replays cells, which IPython and the guard parse) wait
    # for the import: CPython 3.11 builds `ast` objects unsafely on two threads at once
    # (gh-106905), and the SDKs' imports parse sources (anyio's lazy names, among others).
    services.ready_hooks.insert(0, lambda _services: _imported(preparing))
    started = False
    try:
        await services.start()
        started = True
    except StartupError as exc:
        say(f"cave: cannot start: {exc}")
        await services.shutdown()
        return exc.exit_code
    except asyncio.CancelledError:  # Ctrl+C while the namespace was being pre-seeded
        say(f"cave: {await abort_start(services)}")
        await services.shutdown()
        return EXIT_INTERRUPTED
    finally:
        if not started:
            abandon(preparing)  # its thread ends on its own: asyncio.run waits for it
    say_notices(services)
    recorder = features.recorder
    if recorder is not None:
        recorder.on_warning = lambda text: say(f"cave: {text}")
        say(f"{name}: session {recorder.id} ({recorder.dir})")
    banner = services.sandbox_banner
    if banner is not None:
        say(banner)
    signals = CancelOnSignals(services.leave_now)
    received = signals.received
    status = "completed"
    building: asyncio.Future[None] | None = None
    try:
        run = await preparing  # the SDK's import, when it outlasts the runtime's start
        if agent_later:
            building = asyncio.ensure_future(_build_agent_soon(services))
        await run()
    except asyncio.CancelledError:
        status = "terminated" if received else "cancelled"
    except Exception as exc:
        status = "crashed"
        say(f"{name}: unhandled error: {type(exc).__name__}: {exc}")
    finally:
        if building is not None:
            abandon(building)
        signals.remove()
        services.note_exit(status)
        await services.shutdown(leave_on_signals=True)
        for line in services.exit_messages:  # the dump's outcome and the resume line among them
            say(line)
        services.exit_messages.clear()
    if services.left is not None:
        return int(services.left)
    if received:
        return 128 + received[0]
    if status == "cancelled":  # Ctrl+C (asyncio.run cancels the main task on SIGINT)
        return EXIT_INTERRUPTED
    return features.exit_code(0 if status == "completed" else 2)


def say_notices(services: AppServices) -> None:
    """Say the services' notices on stderr, once each."""
    for text in services.notices:
        say(f"cave: {text}")
    services.notices.clear()


async def _build_agent_soon(services: AppServices) -> None:
    """Begin the agent's build `AGENT_AFTER` s from now (unless `ask` began it already);
    once it is over, say its notices (skills skipped, or why it failed) on stderr."""
    await asyncio.sleep(AGENT_AFTER)
    build = services.begin_agent()
    if build is not None:
        await asyncio.wait([build])
    say_notices(services)


async def _imported(preparing: asyncio.Future[Run]) -> None:
    """Once *preparing* is over, however it ended (its outcome is read where it is awaited)."""
    await asyncio.wait([preparing])
