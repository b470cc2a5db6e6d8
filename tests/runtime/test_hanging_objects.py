"""Objects whose own methods never return (issue 29, items 4 and 5), in process.

The cell hooks' change fingerprint, the checkpoint's size estimate and the memory stop's
size look at every name around every cell: none of them may run a model-written method.
"""

from __future__ import annotations

import time

from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.memory import rough_size
from cave_tui.runtime.shipped.summary import fingerprints, sizeof_without_user_code
from tests.helpers.hanging import LAZY

CALLED: list[str] = []


class _Watched:
    """Notes each of its methods that runs (a raise could be caught and go unseen)."""

    def __len__(self) -> int:
        CALLED.append("__len__")
        return 1

    def __sizeof__(self) -> int:
        CALLED.append("__sizeof__")
        return 1

    @property
    def shape(self) -> tuple[int, ...]:
        CALLED.append("shape")
        return (1,)

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        CALLED.append("__class__")
        return _Watched


class _Posing(type):
    """A metaclass whose comparison never returns (a class is compared by identity)."""

    def __eq__(cls, other: object) -> bool:
        CALLED.append("metaclass __eq__")
        return False

    __hash__ = type.__hash__


class _PosesAsPandas(_Watched, metaclass=_Posing):
    """Claims pandas' module: its `shape` and `__sizeof__` are still its own code."""

    __module__ = "pandas.core.frame"


def test_a_class_posing_as_a_data_library_runs_none_of_its_methods():
    CALLED.clear()
    obj = _PosesAsPandas()
    assert fingerprints({"p": obj})["p"].endswith(":")  # no size read from its `shape`
    sizeof_without_user_code(obj)
    rough_size(obj)
    assert CALLED == []


def test_fingerprints_and_sizes_run_no_method_of_the_object():
    CALLED.clear()
    obj = _Watched()
    fp = fingerprints({"h": obj, "xs": [1, 2]})
    assert fp["h"].startswith("_Watched:") and fp["xs"].endswith("len 2")
    assert sizeof_without_user_code(obj) > 0
    assert rough_size(obj) > 0 and rough_size([obj, obj]) > 0
    assert CALLED == []


async def test_cells_after_an_object_whose_len_hangs_run_at_once():
    rt = IPythonRuntime(cell_timeout=3, memory_limit=None)
    try:
        assert (await rt.execute("x = 41")).success
        started = time.monotonic()
        made = await rt.execute(LAZY)
        assert made.success, made.error_text
        assert set(made.changed) == {"Lazy", "lazy"}
        later = await rt.execute("y = 5")
        assert later.success and later.changed == ["y"], later.error_text
        total = await rt.execute("print(x + y)")
        assert total.output == "46\n"
        assert time.monotonic() - started < 3  # no cell waited for its timeout
    finally:
        await rt.stop()


async def test_listing_for_a_snapshot_stops_a_getstate_that_hangs():
    rt = IPythonRuntime(memory_limit=None)
    try:
        made = await rt.execute(
            "class Sticky:\n    def __getstate__(self):\n        while True:\n            pass\n"
            "sticky = Sticky()\nx = 41"
        )
        assert made.success, made.error_text
        started = time.monotonic()
        rows = {row.name: row for row in await rt.persistable(digest_below=1_000_000)}
        assert time.monotonic() - started < 15
        assert rows["sticky"].digest is None and rows["x"].digest is not None
    finally:
        await rt.stop()
