"""IPyKernelRuntime on one shared real kernel: the contract, transport, injection, limits.

Nothing here kills the kernel (test_kernel_faults.py does); every test starts from
an empty namespace (the `kernel` fixture resets it).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import decimal
import fractions
import os
import pathlib
import pickle
import signal
import sqlite3
import sys
import types
import uuid
import zoneinfo
from collections import OrderedDict, defaultdict

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from cave_tui.runtime import Function, Type, Variable
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.kernel import (
    InjectionError,
    IPyKernelRuntime,
    TransferError,
    UnsafeObjectError,
)
from cave_tui.runtime.shipped import links
from cave_tui.runtime.shipped.summary import Codes, Column, Link, summarize_namespace
from tests.runtime.kernel.conftest import make_runtime

SECRETS = {
    "OPENAI_API_KEY": "sk-test-secret",
    "GITHUB_TOKEN": "ghp-test",
    "AWS_SECRET_ACCESS_KEY": "aws-test",
    "AWS_ACCESS_KEY_ID": "AKIA-test",
    "MY_SERVICE_SECRET": "s3cr3t",
    "DATABASE_URL": "postgres://user:pw@db/x",
}


@pytest.fixture(scope="module")
def shared_kernel():
    """Started with secrets in the host's environment (the kernel must not see them)."""
    with pytest.MonkeyPatch.context() as mp:
        for key, value in SECRETS.items():
            mp.setenv(key, value)
        runtime = make_runtime()
        asyncio.run(runtime.start())
    yield runtime
    asyncio.run(runtime.stop())


# -- the contract, side by side with the in-process runtime -------------------------------

PARITY_CELLS = [
    "x = 1\ny = [1, 2]\ny.append(3)\nprint(x, y)",
    "6 * 7",
    "def f():\n    return {}['missing']\nf()",
    "def g(:\n    pass",
    "from IPython.display import display\ndisplay({'k': 1})",
    "import math\nz = math.sqrt(16)\nz",
    "undefined_name + 1",
    "for i in range(3):\n    print(i)",
    "big = list(range(10**5))\nbig",
]


@pytest.mark.parametrize("code", PARITY_CELLS)
async def test_same_results_as_the_in_process_runtime(kernel, code):
    local = IPythonRuntime()
    try:
        expected = await local.execute(code)
        got = await kernel.execute(code)
    finally:
        await local.stop()
    assert got.success == expected.success
    assert got.output == expected.output
    assert got.error_type == expected.error_type
    if expected.error_text:
        assert got.error_text.splitlines()[-1] == expected.error_text.splitlines()[-1]
        assert "<cell>" in got.error_text or got.error_type == "SyntaxError"
        assert "ipykernel" not in got.error_text and "IPython" not in got.error_text
    assert sorted(got.changed) == sorted(expected.changed)
    assert sorted(got.deleted) == sorted(expected.deleted)
    assert got.notice is None


async def test_output_streams_warnings_and_last_value(kernel):
    code = (
        "import sys, warnings\nprint('out')\nprint('err', file=sys.stderr)\n"
        "warnings.warn('careful')\n6*7"
    )
    result = await kernel.execute(code)
    assert result.success, result.error_text
    assert "out" in result.output and "err" in result.output and "careful" in result.output
    assert result.output.rstrip().endswith("42")


async def test_changed_and_deleted(kernel):
    await kernel.execute("a = 1\nb = {'k': 1}")
    result = await kernel.execute("del a\nb['k'] = 2\nc = 3")
    assert result.deleted == ["a"]
    assert sorted(result.changed) == ["b", "c"]


async def test_top_level_await(kernel):
    result = await kernel.execute("import asyncio\nawait asyncio.sleep(0)\nv = 5")
    assert result.success, result.error_text
    assert await kernel.retrieve("v") == 5


async def test_namespace_summary_is_computed_in_the_kernel(kernel):
    kernel.inject(Variable("df", pd.DataFrame({"a": [1, 2], "s": ["x", "y"]}), "the input"))
    await kernel.execute("import json\ndef helper(x: int) -> int:\n    return x\nn = 3")
    rows = {row.name: row for row in await kernel.namespace_summary()}
    assert set(rows) == {"df", "json", "helper", "n"}
    assert rows["df"].description == "the input"
    assert rows["df"].shape == (2, 2) and rows["df"].columns[0] == Column("a", "int64")
    assert rows["helper"].kind == "function" and rows["helper"].signature == "helper(x: int) -> int"
    assert rows["json"].kind == "module" and rows["n"].preview == "3"
    # The kernel's own helpers never show up.
    assert not any(name.startswith("_cave") for name in rows)


async def test_lookup_keys_links_and_codes_are_found_in_the_kernel(kernel):
    airports = pd.DataFrame({"faa": ["JFK", "LGA", "ORD"], "name": ["Kennedy", "LaG", "Ohare"]})
    kernel.inject(Variable("airports", airports))
    await kernel.execute(
        "import pandas as pd\n"
        "flights = pd.DataFrame({'dest': ['ORD', 'LGA', 'ORD'], 'n': [1, 2, 3]})\n"
        "top = ['ORD']"
    )
    rows = {row.name: row for row in await kernel.namespace_summary()}
    assert rows["airports"].relations.key == "faa"
    assert rows["flights"].relations.links == [Link("dest", "airports", "faa")]
    assert rows["top"].relations.codes == Codes("airports", "faa", "values")


async def test_summary_rows_come_from_the_kernel_as_the_structure_the_host_builds(kernel):
    setup = (
        "import numpy as np\nimport pandas as pd\n"
        "airports = pd.DataFrame({'faa': ['JFK', 'LGA', 'ORD'], 'name': ['Ken', 'LaG', 'Oh']})\n"
        "cities = ['Washington, DC', 'Portland, OR'] * 3\n"
        "trips = pd.DataFrame({'dest': ['ORD', 'LGA'] * 3, 'city': cities})\n"
        "by_dest = trips.groupby('dest').size()\n"
        "wide = pd.DataFrame({f'c{i}': [i] for i in range(30)})\n"
        "arr = np.zeros((3, 0))\nx = np.float64(0.5)\nitems = [1, 2]\nempty = []\nnothing = None\n"
        "unmatched = by_dest.reindex(['a', 'b']).astype(float)\n"
    )
    await kernel.execute(setup)
    rows = {row.name: row for row in await kernel.namespace_summary()}
    assert rows["trips"].levels["city"] == ["Portland, OR", "Washington, DC"]
    assert rows["trips"].relations.links == [Link("dest", "airports", "faa")]
    assert rows["by_dest"].relations.codes == Codes("airports", "faa", "index", "dest")
    assert (rows["wide"].shape, len(rows["wide"].columns), rows["wide"].more_columns) == (
        (1, 30),
        24,
        6,
    )
    assert rows["wide"].more_names == [f"c{i}" for i in range(24, 30)]  # named, for the model
    assert (rows["arr"].shape, rows["arr"].is_empty, rows["arr"].dtype) == ((3, 0), True, "float64")
    assert (rows["x"].shape, rows["x"].shape_text(), rows["x"].is_empty) == ((), "scalar", False)
    assert rows["unmatched"].all_missing and not rows["by_dest"].all_missing
    assert (rows["items"].length, rows["empty"].is_empty, rows["nothing"].is_empty) == (
        2,
        True,
        True,
    )
    # The same objects summarised in process: the same rows, field for field.
    ns: dict = {}
    exec(setup, ns)
    del ns["__builtins__"]
    local = summarize_namespace(ns)
    links.annotate(ns, local)
    for row in local:
        sent = dataclasses.replace(rows[row.name], fingerprint="", size_bytes=None)
        assert sent == dataclasses.replace(row, fingerprint="", size_bytes=None)


async def test_the_kernel_is_another_user_in_its_own_directory(kernel):
    await kernel.execute(
        "import os\nuid = os.getuid()\ncwd = os.getcwd()\nhome = os.environ['HOME']\n"
        "open('written.txt', 'w').write('ok')\nenv = dict(os.environ)"
    )
    cwd = await kernel.retrieve("cwd")
    assert cwd == kernel.workdir and cwd.startswith(kernel.runtime_dir)
    assert (pathlib.Path(cwd) / "written.txt").read_text() == "ok"
    assert (await kernel.retrieve("home")).startswith(kernel.runtime_dir)
    env = await kernel.retrieve("env")
    for key in SECRETS:
        assert key not in env, key
    assert not any(k.startswith("AWS_") or k.endswith(("_TOKEN", "_API_KEY")) for k in env)
    if os.geteuid() == 0:
        assert await kernel.retrieve("uid") == 65534  # nobody


@pytest.mark.skipif(os.geteuid() != 0, reason="privilege drop applies to root hosts")
async def test_kernel_cannot_signal_or_inspect_the_host(kernel):
    host = os.getpid()
    code = f"""
import os
try:
    os.kill({host}, 0)
    signal_result = "sent"
except PermissionError:
    signal_result = "denied"
except ProcessLookupError:
    signal_result = "invisible"
try:
    open('/proc/{host}/environ').read()
    environ_result = "read"
except OSError as exc:
    environ_result = type(exc).__name__
visible = os.path.exists('/proc/{host}')
try:
    root_home = os.listdir('/root')
except OSError:
    root_home = []
"""
    result = await kernel.execute(code)
    assert result.success, result.error_text
    assert await kernel.retrieve("signal_result") == "denied"
    assert await kernel.retrieve("environ_result") != "read"
    assert await kernel.retrieve("visible") is False  # /proc mounted with hidepid
    # root's home is hidden: at most the interpreter's directory is reachable there.
    visible_home = set(await kernel.retrieve("root_home"))
    assert visible_home <= {".pyenv", ".local"} and visible_home != set(os.listdir("/root"))


# -- retrieve: what comes back, and how ---------------------------------------------------


async def test_retrieve_plain_data_as_json(kernel):
    await kernel.execute(
        "data = {'a': [1, 2.5, None, True], 'b': {'nested': 'text'}, 'nan': float('nan')}"
    )
    data = await kernel.retrieve("data")
    assert data["a"] == [1, 2.5, None, True] and data["b"] == {"nested": "text"}
    assert data["nan"] != data["nan"]


async def test_retrieve_allow_listed_types(kernel):
    await kernel.execute(
        """
import datetime as dt, decimal, fractions, uuid, pathlib, zoneinfo
from collections import OrderedDict, defaultdict
import numpy as np, pandas as pd
values = {
    'tuple': (1, 'a'), 'set': {1, 2}, 'frozen': frozenset([3]), 'complex': 1 + 2j,
    'bytes': b'\\x00\\x01',
    'when': dt.datetime(2024, 5, 1, 12, tzinfo=zoneinfo.ZoneInfo('Europe/Paris')),
    'utc': dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc), 'day': dt.date(2024, 1, 2),
    'clock': dt.time(3, 4), 'span': dt.timedelta(days=2), 'money': decimal.Decimal('1.10'),
    'ratio': fractions.Fraction(1, 3), 'id': uuid.UUID(int=7),
    'path': pathlib.PurePosixPath('/a/b'),
    'ordered': OrderedDict(b=1, a=2), 'groups': defaultdict(list, {'x': [1]}),
    'stamp': pd.Timestamp('2024-01-01 10:00', tz='UTC'), 'delta': pd.Timedelta('1h'),
    'nat': pd.NaT, 'np_int': np.int64(5), 'np_float': np.float32(0.5), 'int_key': {1: 'one'},
}
"""
    )
    got = await kernel.retrieve("values")
    assert got["tuple"] == (1, "a") and got["set"] == {1, 2} and got["frozen"] == frozenset([3])
    assert got["complex"] == 1 + 2j and got["bytes"] == b"\x00\x01"
    assert got["when"] == dt.datetime(2024, 5, 1, 12, tzinfo=zoneinfo.ZoneInfo("Europe/Paris"))
    assert got["utc"].tzinfo == dt.UTC and got["day"] == dt.date(2024, 1, 2)
    assert got["clock"] == dt.time(3, 4) and got["span"] == dt.timedelta(days=2)
    assert got["money"] == decimal.Decimal("1.10") and got["ratio"] == fractions.Fraction(1, 3)
    assert got["id"] == uuid.UUID(int=7) and got["path"] == pathlib.PurePosixPath("/a/b")
    assert got["ordered"] == OrderedDict(b=1, a=2) and isinstance(got["ordered"], OrderedDict)
    assert isinstance(got["groups"], defaultdict) and got["groups"]["x"] == [1]
    assert got["groups"].default_factory is list
    assert got["stamp"] == pd.Timestamp("2024-01-01 10:00", tz="UTC")
    assert got["delta"] == pd.Timedelta("1h") and got["nat"] is pd.NaT
    assert got["np_int"] == 5 and type(got["np_int"]) is int  # NumPy scalars come back as Python's
    assert type(got["np_float"]) is float and got["int_key"] == {1: "one"}


async def test_retrieve_frames_and_arrays_by_arrow(kernel):
    await kernel.execute(
        """
import numpy as np, pandas as pd, pyarrow as pa
frame = pd.DataFrame({
    'i': [1, 2, 3], 'f': [0.5, None, 2.0], 's': ['a', 'b', None],
    'when': pd.date_range('2024-01-01', periods=3, tz='UTC'),
    'cat': pd.Categorical(['x', 'y', 'x']), 'n': pd.array([1, None, 3], dtype='Int64'),
}, index=pd.Index(['r1', 'r2', 'r3'], name='row'))
series = pd.Series([1.5, 2.5], name='price')
matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
flags = np.array([True, False])
stamps = np.array(['2024-01-01', '2024-01-02'], dtype='datetime64[D]')
waves = np.array([1 + 1j, 2 - 1j])
table = pa.table({'k': [1, 2]})
"""
    )
    frame = await kernel.retrieve("frame")
    pd.testing.assert_frame_equal(
        frame,
        pd.DataFrame(
            {
                "i": [1, 2, 3],
                "f": [0.5, None, 2.0],
                "s": ["a", "b", None],
                "when": pd.date_range("2024-01-01", periods=3, tz="UTC"),
                "cat": pd.Categorical(["x", "y", "x"]),
                "n": pd.array([1, None, 3], dtype="Int64"),
            },
            index=pd.Index(["r1", "r2", "r3"], name="row"),
        ),
    )
    series = await kernel.retrieve("series")
    assert series.name == "price" and series.tolist() == [1.5, 2.5]
    matrix = await kernel.retrieve("matrix")
    assert matrix.dtype == np.float32 and matrix.shape == (3, 4) and matrix[2, 3] == 11
    matrix[0, 0] = 99  # a writable copy
    assert (await kernel.retrieve("flags")).tolist() == [True, False]
    stamps = await kernel.retrieve("stamps")
    assert stamps.dtype == np.dtype("datetime64[D]") and str(stamps[1]) == "2024-01-02"
    assert (await kernel.retrieve("waves")).tolist() == [1 + 1j, 2 - 1j]
    table = await kernel.retrieve("table")
    assert isinstance(table, pa.Table) and table.column("k").to_pylist() == [1, 2]


async def test_retrieve_missing_name_suggests(kernel):
    await kernel.execute("total_sales = 1")
    with pytest.raises(KeyError, match="did you mean total_sales"):
        await kernel.retrieve("total_sale")


async def test_retrieve_of_an_arbitrary_class_is_refused_with_options(kernel):
    await kernel.execute(
        "class Point:\n    def __init__(self):\n        self.x = 1\np = Point()\nmixed = [Point()]"
    )
    for name in ("p", "mixed"):
        with pytest.raises(TransferError) as info:
            await kernel.retrieve(name)
        message = str(info.value)
        assert "Point" in message and "trust_kernel=True" in message
        assert "convert it inside the kernel" in message and "unsafe" in message


async def test_retrieve_unpicklable_object_clear_error(kernel):
    await kernel.execute("import threading\nlock = threading.Lock()\ngen = (i for i in [1])")
    with pytest.raises(TransferError, match=r"'lock' \(_thread\.lock\).*cannot pickle"):
        await kernel.retrieve("lock")
    with pytest.raises(TransferError, match=r"'gen' \(generator\)"):
        await kernel.retrieve("gen")
    assert (await kernel.execute("print('still fine')")).output == "still fine\n"


EVIL = """
import os, pickle
class Evil:
    def __reduce__(self):
        return (os.system, ({cmd!r},))
evil = Evil()
"""


async def test_malicious_reduce_runs_nothing_in_the_host(kernel, tmp_path):
    marker = tmp_path / "pwned"
    await kernel.execute(EVIL.format(cmd=f"touch {marker}"))
    with pytest.raises(TransferError, match=r"posix\.system"):
        await kernel.retrieve("evil")
    assert not marker.exists()


async def test_forged_kernel_bytes_are_refused_by_the_host(kernel, tmp_path):
    """Model code owns the kernel: it can replace the kernel-side encoder and send a
    malicious pickle straight to the host. The host's unpickler must refuse it."""
    marker = tmp_path / "pwned"
    await kernel.execute(EVIL.format(cmd=f"touch {marker}"))
    await kernel.execute(
        "import _cave_transport\n_cave_transport.original = _cave_transport.encode_for_host"
    )
    try:
        for codec in ("pickle.safe", "dill"):
            forged = await kernel.execute(
                "import _cave_transport, pickle\n"
                f"_cave_transport.encode_for_host = lambda value, **kw: ({codec!r}, {{}}, "
                "[pickle.dumps(evil)])\nx = 1"
            )
            assert forged.success, forged.error_text
            with pytest.raises(UnsafeObjectError):
                await kernel.retrieve("x")
            assert not marker.exists()
    finally:
        await kernel.execute(
            "import _cave_transport\n_cave_transport.encode_for_host = _cave_transport.original"
        )


async def test_trust_kernel_uses_dill_and_is_really_unsafe(kernel, tmp_path):
    marker = tmp_path / "ran-in-host"
    await kernel.execute(
        "class Point:\n    def __init__(self, x):\n        self.x = x\n"
        "    def double(self):\n        return 2 * self.x\np = Point(4)"
    )
    await kernel.execute(EVIL.format(cmd=f"touch {marker}"))
    kernel.trust_kernel = True
    try:
        point = await kernel.retrieve("p")
        assert point.double() == 8 and type(point).__name__ == "Point"
        await kernel.retrieve("evil")  # with trust, the kernel's code runs here
        assert marker.exists()
    finally:
        kernel.trust_kernel = False


# -- injection: copies, not references --------------------------------------------------------


async def test_injected_frame_and_array_are_copies(kernel):
    frame = pd.DataFrame({"a": [1, 2, 3]})
    array = np.arange(4.0)
    kernel.inject(Variable("df", frame))
    kernel.inject(Variable("arr", array))
    frame.loc[0, "a"] = 100  # the host changes its object after injecting
    array[0] = -1
    result = await kernel.execute(
        "df['a'] = df['a'] * 2\narr += 1\nsums = (int(df.a.sum()), float(arr.sum()))"
    )
    assert result.success, result.error_text
    assert await kernel.retrieve("sums") == (12, 10.0)  # the kernel saw the injected copy
    assert frame["a"].tolist() == [100, 2, 3] and array.tolist() == [-1.0, 1.0, 2.0, 3.0]
    pd.testing.assert_frame_equal(await kernel.retrieve("df"), pd.DataFrame({"a": [2, 4, 6]}))


async def test_inject_closure_lambda_instance_and_type(kernel):
    offset = 10

    def add(x: int) -> int:
        """Add the offset."""
        return x + offset

    class Counter:
        def __init__(self, start: int) -> None:
            self.n = start

        def bump(self) -> int:
            self.n += 1
            return self.n

    counter = Counter(5)
    kernel.inject(Function(add))
    kernel.inject(Variable("square", lambda v: v * v))
    kernel.inject(Variable("counter", counter))
    kernel.inject(Type(Counter, "counts up"))
    offset = 1000  # closures captured the value at injection
    result = await kernel.execute(
        "out = (add(1), square(7), counter.bump(), counter.bump(), Counter(0).bump())"
    )
    assert result.success, result.error_text
    assert await kernel.retrieve("out") == (11, 49, 6, 7, 1)
    assert counter.n == 5  # the host's instance is untouched
    rows = {r.name: r for r in await kernel.namespace_summary()}
    assert rows["add"].doc == "Add the offset." and rows["Counter"].description == "counts up"


async def test_inject_sqlite_connection_is_a_clear_error(kernel):
    connection = sqlite3.connect(":memory:")
    try:
        with pytest.raises(InjectionError) as info:
            kernel.inject(Variable("conn", connection, "a database"))
    finally:
        connection.close()
    message = str(info.value)
    assert "'conn' (sqlite3.Connection)" in message
    assert "Function that opens it inside the kernel" in message
    assert "conn" not in kernel.injected
    assert (await kernel.execute("print('ok')")).success


async def test_injection_is_delivered_without_a_cell(kernel):
    kernel.inject(Variable("v", {"k": 1}))
    assert await kernel.retrieve("v") == {"k": 1}
    kernel.inject(Variable("v", 2))  # replacing a name
    assert await kernel.retrieve("v") == 2


async def test_inject_failure_inside_the_kernel_is_reported(kernel):
    module = types.ModuleType("cave_host_only_module")
    exec("def helper():\n    return 1", module.__dict__)
    module.helper.__module__ = module.__name__
    sys.modules[module.__name__] = module
    try:
        with pytest.raises(InjectionError, match="No module named 'cave_host_only_module'"):
            await kernel.ainject(Function(module.helper))
        kernel.inject(Function(module.helper, name="helper2"))
        result = await kernel.execute("1")
        assert "Injecting 'helper2' failed" in (result.notice or "")
    finally:
        del sys.modules[module.__name__]


async def test_delete_and_reset(kernel):
    kernel.inject(Variable("keep", 1))
    await kernel.execute("scratch = 2")
    await kernel.delete("scratch")
    with pytest.raises(KeyError):
        await kernel.delete("scratch")
    await kernel.execute("more = 3")
    await kernel.reset()
    names = await kernel.names()
    assert names == ["keep"]


# -- output, interrupts, timeouts (the kernel survives all of these) --------------------------


async def test_printing_100_mb_is_capped_in_the_kernel(kernel):
    pid = kernel.kernel_pid
    result = await kernel.execute("print('x' * 100_000_000)\nprint('the end')")
    assert result.success
    assert len(result.output) < 2 * kernel.output_limit + 500
    assert "characters of output dropped" in result.output
    assert result.output.rstrip().endswith("the end")
    assert result.output_truncated_chars > 99_000_000
    many = await kernel.execute("for i in range(300_000):\n    print(i)")
    assert "299999" in many.output and many.output_truncated_chars > 0
    assert kernel.kernel_pid == pid


async def test_timeout_interrupts_a_python_loop_without_restart(kernel):
    pid = kernel.kernel_pid
    await kernel.execute("n = 0")
    result = await kernel.execute("while True:\n    n += 1", timeout=0.5)
    assert result.timed_out and result.interrupted and result.error_type == "Timeout"
    assert result.notice is None and kernel.kernel_pid == pid
    first = await kernel.retrieve("n")
    assert first > 0 and await kernel.retrieve("n") == first


async def test_interrupt_method_and_external_sigint(kernel):
    pid = kernel.kernel_pid
    task = asyncio.create_task(kernel.execute("import time\nk = 0\nwhile True:\n    k += 1"))
    await asyncio.sleep(0.5)
    await kernel.interrupt()
    result = await asyncio.wait_for(task, 10)
    assert result.interrupted and result.error_type == "KeyboardInterrupt"
    task = asyncio.create_task(kernel.execute("time.sleep(30)"))
    await asyncio.sleep(0.5)
    os.kill(pid, signal.SIGINT)  # a SIGINT from outside the runtime
    result = await asyncio.wait_for(task, 10)
    assert result.interrupted and "KeyboardInterrupt" in result.error_text
    assert kernel.kernel_pid == pid and (await kernel.execute("k > 0")).output == "True\n"


async def test_cancelling_execute_stops_the_cell(kernel):
    task = asyncio.create_task(kernel.execute("import time\nm = 0\nwhile True:\n    m += 1"))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    value = await kernel.retrieve("m")
    await asyncio.sleep(0.2)
    assert await kernel.retrieve("m") == value


async def test_recursion_error_is_an_ordinary_error(kernel):
    result = await kernel.execute("def f(n):\n    return f(n + 1)\nf(0)")
    assert result.error_type == "RecursionError" and "[… " in result.error_text
    assert (await kernel.execute("1 + 1")).output == "2\n"


async def test_runtime_works_across_event_loops(shared_kernel):
    """The module-scoped kernel already serves each test's own loop; a plain
    asyncio.run() in a thread works too."""

    def run() -> int:
        return asyncio.run(shared_kernel.execute("40 + 2")).output

    assert await asyncio.to_thread(run) == "42\n"


def test_constructor_refuses_secrets_in_env():
    with pytest.raises(ValueError, match="looks like a secret"):
        IPyKernelRuntime(env={"ANTHROPIC_API_KEY": "x"})


def test_safe_unpickler_is_what_the_host_uses():
    """Sanity: the allow-list refuses os.system even when pickled by the host itself."""
    from cave_tui.runtime.shipped.transport import safe_loads

    class Bad:
        def __reduce__(self):
            return (os.system, ("true",))

    with pytest.raises(UnsafeObjectError):
        safe_loads(pickle.dumps(Bad()))
    assert safe_loads(pickle.dumps({"a": (1, 2)})) == {"a": (1, 2)}


async def test_without_a_user_switch_the_other_limits_still_hold(tmp_path):
    """What an ordinary (non-root) host gets: the kernel runs as the host's user, with
    the scrubbed environment, its own directory and the memory limit."""
    runtime = make_runtime(run_as=None, memory_limit="2G", cwd=str(tmp_path / "work"))
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("SOME_API_KEY", "secret")
            await runtime.start()
        await runtime.execute(
            "import os, resource\nuid = os.getuid()\ncwd = os.getcwd()\n"
            "leaked = 'SOME_API_KEY' in os.environ\n"
            "limit = resource.getrlimit(resource.RLIMIT_DATA)[0]\n"
            "space = resource.getrlimit(resource.RLIMIT_AS)[0]"
        )
        assert await runtime.retrieve("uid") == os.getuid()
        assert await runtime.retrieve("cwd") == str(tmp_path / "work")
        assert await runtime.retrieve("leaked") is False
        assert await runtime.retrieve("limit") == 2 * 2**30  # memory: RLIMIT_DATA
        assert await runtime.retrieve("space") == 8 * 2**30  # the address-space backstop
    finally:
        await runtime.stop()
    assert (tmp_path / "work").is_dir()  # a cwd the caller chose is kept


async def test_a_hanging_repr_cannot_hang_the_namespace_summary(kernel):
    await kernel.execute(
        "class Sticky:\n    def __repr__(self):\n        while True:\n            pass\n"
        "sticky = Sticky()\nfine = [1, 2]"
    )
    started = asyncio.get_running_loop().time()
    rows = {r.name: r for r in await kernel.namespace_summary()}
    assert asyncio.get_running_loop().time() - started < 15
    assert rows["sticky"].preview == "not described: it took too long"
    assert rows["fine"].preview == "[1, 2]"
    notice = (await kernel.execute("1")).notice or ""
    assert "Describing 'sticky'" in notice
    started = asyncio.get_running_loop().time()
    rows = {r.name: r for r in await kernel.namespace_summary()}  # skipped now: fast
    assert asyncio.get_running_loop().time() - started < 2
    assert "hung before" in rows["sticky"].preview and rows["fine"].preview == "[1, 2]"
