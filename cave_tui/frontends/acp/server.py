"""`cave acp`'s lifecycle: the session's data features, the runtime, the agent over stdio.

As `cave mcp`'s: the data features installed (`--inject`, `--load`, `--dump`, `--resume`,
the recording), the runtime started (a pre-seed that fails stops the start), the ACP
connection served until the client closes stdin (or SIGTERM/SIGHUP), then the exit hooks
(dump, session closed) and the runtime stopped. stdout is the protocol's; cave's own lines
go to stderr.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import TYPE_CHECKING, cast

from acp import run_agent
from acp.stdio import stdio_streams

from cave_tui.app.exits import CancelOnSignals
from cave_tui.app.startup import DataOptions, StartupError, abort_start, install
from cave_tui.frontends.acp.agent import CaveAcpAgent
from cave_tui.frontends.acp.transport import LINE_LIMIT, LineTransport
from cave_tui.printable import printable

if TYPE_CHECKING:
    from acp import Agent

    from cave_tui.app.services import AppServices

EXIT_INTERRUPTED = 128 + signal.SIGINT


def _err(text: str) -> None:
    """A line on stderr (stdout is the protocol's): printable only."""
    sys.stderr.write(printable(text) + "\n")
    sys.stderr.flush()


async def _run_stdio(agent: CaveAcpAgent) -> None:
    """Serve *agent* over this process's stdin and stdout until the client closes stdin."""
    reader, writer = await stdio_streams(limit=LINE_LIMIT)
    # The SDK routes by method name and answers -32601 for what cave does not implement
    # (session/list, set_mode, …), so the agent implements part of its `Agent` protocol.
    await run_agent(cast("Agent", agent), LineTransport(reader, writer))


async def serve(services: AppServices, data: DataOptions) -> int:
    """Serve *services* as an ACP agent over stdio until the client leaves; the exit code
    (as `cave run`'s: 2 when the start failed, 128+N on signal N, 3 when --dump failed)."""
    features = install(services, data, label="cave acp", announce=False)
    try:
        await services.start()
    except StartupError as exc:
        _err(f"cave: cannot start: {exc}")
        await services.shutdown()
        return exc.exit_code
    except asyncio.CancelledError:  # Ctrl+C while the namespace was being pre-seeded
        _err(f"cave: {await abort_start(services)}")
        await services.shutdown()
        return EXIT_INTERRUPTED
    for text in services.notices:
        _err(f"cave: {text}")
    services.notices.clear()
    recorder = features.recorder
    if recorder is not None:
        recorder.on_warning = lambda text: _err(f"cave: {text}")
        _err(f"cave acp: session {recorder.id} ({recorder.dir})")
    banner = services.sandbox_banner
    if banner is not None:
        _err(banner)
    agent = CaveAcpAgent(services, trust=data.trust)
    signals = CancelOnSignals(services.leave_now)
    received = signals.received
    status = "completed"
    try:
        await _run_stdio(agent)
    except asyncio.CancelledError:
        status = "terminated" if received else "cancelled"
    except Exception as exc:
        status = "crashed"
        _err(f"cave acp: unhandled error: {type(exc).__name__}: {exc}")
    finally:
        signals.remove()
        services.note_exit(status)
        await services.shutdown(leave_on_signals=True)
        for line in services.exit_messages:
            _err(line)
        services.exit_messages.clear()  # the dump's outcome and the resume line among them
    if services.left is not None:
        return int(services.left)
    if received:
        return 128 + received[0]
    return features.exit_code(0 if status == "completed" else 2)
