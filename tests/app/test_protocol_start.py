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


def test_import_soon_imports_on_a_thread_and_leaves_a_failure_to_the_next_import(
    tmp_path, monkeypatch
) -> None:
    import importlib
    import sys

    import pytest

    from cave_tui.app.protocol_server import import_soon

    (tmp_path / "soon_ok.py").write_text(
        "import threading, time\ntime.sleep(0.2)\nTHREAD = threading.current_thread().name\n"
    )
    (tmp_path / "soon_broken.py").write_text("raise ImportError('no SDK here')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("soon_ok", "soon_broken"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import_soon("soon_ok")
    import_soon("soon_broken")
    module = importlib.import_module("soon_ok")  # waits for the thread's import
    assert module.THREAD == "import soon_ok"
    deadline = time.monotonic() + 10
    while any(t.name == "import soon_broken" for t in threading.enumerate()):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with pytest.raises(ImportError, match="no SDK here"):
        importlib.import_module("soon_broken")


def test_cave_mcp_and_acp_begin_their_import_before_the_config_is_read(monkeypatch) -> None:
    import cave_tui.frontends.cli.main as cli
    from cave_tui.app import protocol_server

    order: list[str] = []
    monkeypatch.setattr(protocol_server, "import_soon", lambda module: order.append(module))

    def stop(*args: object, **kwargs: object) -> None:
        order.append("config")
        raise SystemExit(0)

    monkeypatch.setattr(cli, "build_services", stop)
    for serve in (lambda: cli.serve_mcp({}, [], None, DataOptions()),
                  lambda: cli.serve_acp({}, [], DataOptions())):  # fmt: skip
        try:
            serve()
        except SystemExit:
            pass
    assert order == [
        "cave_tui.frontends.mcp.server",
        "config",
        "cave_tui.frontends.acp.agent",
        "config",
    ]
