"""`serve_protocol`, the start every protocol front end shares: the front end's import on a
worker thread beside the runtime's start, the start's loads after it."""

from __future__ import annotations

import threading
import time

from cave_tui.app import startup
from cave_tui.app.config import Config
from cave_tui.app.protocol_server import Run, serve_protocol
from cave_tui.app.services import AppServices
from cave_tui.app.startup import DataOptions


async def test_the_start_loads_wait_for_the_import_and_the_server_runs_on_the_loop(
    tmp_path, monkeypatch
) -> None:
    said: list[str] = []
    loop_thread = threading.get_ident()
    loads = startup.DataFeatures.on_ready

    async def on_ready(self: startup.DataFeatures) -> None:
        said.append("loads")
        await loads(self)

    monkeypatch.setattr(startup.DataFeatures, "on_ready", on_ready)

    def prepare() -> Run:
        assert threading.get_ident() != loop_thread  # imported beside the runtime's start
        deadline = time.monotonic() + 30
        while not services.ready:  # an SDK's import that outlasts the runtime's start
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(0.1)
        said.append("imported")

        async def run() -> None:
            assert threading.get_ident() == loop_thread and services.ready
            said.append("served")

        return run

    services = AppServices(Config(kernel=False))
    data = DataOptions(sessions_dir=tmp_path / "sessions")
    assert await serve_protocol(services, data, name="cave test", prepare=prepare) == 0
    assert said == ["imported", "loads", "served"]
