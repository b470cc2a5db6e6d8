"""Work no command runs reports its progress too (issue 34, item 4): `--inject` at the start
reports the bytes and rows read, `--dump` at exit the variables written, as typed `Progress`
records to `services.progress_hooks` (which the app, `--plain` and `cave run` draw)."""

from __future__ import annotations

import pandas as pd

from cave_tui.app.config import Config
from cave_tui.app.data_options import DataOptions
from cave_tui.app.services import AppServices
from cave_tui.app.startup import install
from cave_tui.dataio import load as load_module
from cave_tui.dataio.progress import Progress


async def test_inject_at_start_and_dump_at_exit_report_their_progress(tmp_path, monkeypatch):
    monkeypatch.setattr(load_module, "SMALL_FILE", 0)  # the chunked path, with progress
    monkeypatch.setattr(load_module, "CSV_CHUNK_ROWS", 1_000)
    path = tmp_path / "flights.csv"
    pd.DataFrame({"a": range(5_000), "b": [0.5] * 5_000}).to_csv(path, index=False)
    services = AppServices(Config(kernel=False))
    seen: list[tuple[Progress, str]] = []
    services.progress_hooks.append(lambda progress, label: seen.append((progress, label)))
    data = DataOptions(inject=[str(path)], dump=tmp_path / "out", sessions_dir=tmp_path / "s")
    features = install(services, data, announce=False)
    try:
        await services.start()
        loads = [p for p, label in seen if label == "flights.csv" and p.stage == "reading"]
        assert loads and loads[-1].unit == "bytes" and (loads[-1].rows or 0) >= 4_000
        assert await features.dump_now()
        dumps = [p for p, label in seen if label == str(tmp_path / "out")]
        assert dumps and all(p.unit == "variables" and p.stage == "writing" for p in dumps)
        assert (tmp_path / "out" / "manifest.json").exists()
    finally:
        await services.shutdown()


async def test_load_at_start_reports_the_variables_read(tmp_path):
    from cave_tui.dataio import dump_namespace
    from cave_tui.runtime import IPythonRuntime
    from cave_tui.runtime.items import Variable

    source = IPythonRuntime()
    try:
        for name in ("a", "b", "c"):
            source.inject(Variable(name, pd.DataFrame({"x": [1, 2]})))
        await dump_namespace(source, tmp_path / "saved")
    finally:
        await source.stop()
    services = AppServices(Config(kernel=False))
    seen: list[tuple[Progress, str]] = []
    services.progress_hooks.append(lambda progress, label: seen.append((progress, label)))
    install(services, DataOptions(load=tmp_path / "saved", sessions_dir=tmp_path / "s"))
    try:
        await services.start()
        reads = [p for p, label in seen if label == str(tmp_path / "saved")]
        assert [p.done for p in reads] == [0, 1, 2] and {p.total for p in reads} == {3}
        assert all(p.unit == "variables" and p.stage == "reading" for p in reads)
        assert sorted(await services.runtime.names()) == ["a", "b", "c"]
    finally:
        await services.shutdown()
