"""Objects that cannot cross a process boundary: made in the kernel they work across turns;
handed in from the host they are named with the reason, and the in-process runtime is offered."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cave_tui.app.config import Config
from cave_tui.app.services import AppServices
from cave_tui.dataio import dump_namespace
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPyKernelRuntime, Variable
from cave_tui.runtime.kernel.errors import NotTransferable
from tests.reliability.real_cave import cave, code

MODULE = """
import sqlite3
conn = sqlite3.connect(":memory:")
conn.execute("create table t(a)")
conn.execute("insert into t values (41)")
"""


async def test_a_connection_opened_in_the_kernel_is_used_across_turns(tmp_path: Path):
    replies = [
        code(
            "import sqlite3\ndb = sqlite3.connect(':memory:')\n"
            "db.execute('create table t(a)')\ndb.execute('insert into t values (1)')"
        ),
        "The table is ready.",
        code(
            "db.execute('insert into t values (2)')\nn = db.execute('select sum(a) from t')"
            ".fetchone()[0]\nprint(n)"
        ),
        "The sum is 3.",
    ]
    services = AppServices(Config(kernel=True, sandbox=False), model=ScriptedModel(replies))
    try:
        await services.start()
        assert services.runtime.isolated
        for task in ("open a database", "add a row and sum"):
            result = await services.agent.run(task)
            assert result.completed, result
        assert await services.runtime.retrieve("n") == 3
        dumped = await dump_namespace(services.runtime, tmp_path / "dump")
        skipped = {entry["name"]: entry["reason"] for entry in dumped.skipped}
        assert "n" in dumped.written and "cannot be pickled" in skipped["db"]
    finally:
        await services.shutdown()


async def test_a_live_object_from_the_host_is_named_with_its_reason():
    runtime = IPyKernelRuntime(variables=[Variable("conn", sqlite3.connect(":memory:"))])
    try:
        result = await runtime.execute("x = 1")
        assert result.success and "conn" in (result.notice or "")
        assert "sqlite3.Connection" in result.notice and "pickle" in result.notice
        try:
            await runtime.ainject(Variable("again", sqlite3.connect(":memory:")))
        except NotTransferable as exc:
            assert (exc.name, exc.type_name) == ("again", "sqlite3.Connection")
            assert "pickle" in exc.reason
        else:
            raise AssertionError("a live connection was copied into the kernel")
        assert (await runtime.execute("print(x)")).output == "1\n"  # the kernel is fine
    finally:
        await runtime.stop()


def test_the_app_names_a_host_connection_and_offers_the_in_process_runtime(tmp_path: Path):
    (tmp_path / "livedb.py").write_text(MODULE)
    extra = {"PYTHONPATH": str(tmp_path)}
    args = ("run", "/vars", "--inject", "pkg:livedb.conn", "--sessions-dir", "s")
    refused = cave(*args, cwd=tmp_path, extra_env=extra)  # the default runtime: the kernel
    assert refused.returncode == 2, refused.stderr
    assert "'conn' (sqlite3.Connection) is a live object" in refused.stderr
    assert "--in-process" in refused.stderr and "Traceback" not in refused.stderr
    shared = cave(*args, "--in-process", cwd=tmp_path, extra_env=extra)
    assert shared.returncode == 0, shared.stderr
    assert "conn" in shared.stdout and "Connection" in shared.stdout
