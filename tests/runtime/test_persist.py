"""`Runtime.persistable`: every user name, how a dump keeps it, definitions kept as source."""

from __future__ import annotations

from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.shipped.persist import Definitions, Keep, Persistable, content_digest

MANY = 10_050  # past the in-process summary's cap of 10,000


async def test_the_listing_for_persistence_is_complete_past_the_display_cap():
    runtime = IPythonRuntime()
    await runtime.execute("\n".join(f"v{i} = {i}" for i in range(MANY)))
    assert len(await runtime.namespace_summary()) == 10_000  # the prompt's bound stays
    items = await runtime.persistable()
    assert [i.name for i in items] == [f"v{i}" for i in range(MANY)]
    assert len(await runtime.names()) == MANY  # conflict checks and resume see every name
    await runtime.stop()


DEFINING_CELL = """\
import functools

@functools.lru_cache
def cached(n):
    return n * 2

class Point:
    def norm(self):
        return 5

square = lambda v: v * v
if True:
    def nested(x):
        return x
alias = square
gen = (i for i in range(3))
"""


async def test_cell_definitions_are_kept_as_their_source_in_order():
    runtime = IPythonRuntime()
    await runtime.execute(DEFINING_CELL)
    items = {i.name: i for i in await runtime.persistable()}
    assert items["functools"].keep is Keep.MODULE and items["functools"].module == "functools"
    cached = items["cached"]
    assert cached.keep is Keep.SOURCE
    assert cached.source == "@functools.lru_cache\ndef cached(n):\n    return n * 2\n"
    assert items["Point"].keep is Keep.SOURCE and "def norm(self)" in items["Point"].source
    assert items["square"].source == "square = lambda v: v * v\n"
    assert items["nested"].keep is Keep.SOURCE  # inside a block: found through the cell's lines
    assert items["nested"].source == "def nested(x):\n    return x\n"
    assert items["alias"].keep is Keep.VALUE  # the lambda again, but no statement defines it
    assert items["gen"].keep is Keep.NOTHING and "generator" in items["gen"].reason
    assert cached.order < items["Point"].order < items["square"].order
    # A later cell rebinding the name ends it; a cell that fails before its def records none.
    await runtime.execute("Point = 3")
    await runtime.execute("1 / 0\ndef never():\n    pass\n")
    items = {i.name: i for i in await runtime.persistable()}
    assert items["Point"].keep is Keep.VALUE and "never" not in items
    await runtime.execute("def cached(n):\n    return n\n")
    items = {i.name: i for i in await runtime.persistable()}
    assert items["cached"].source == "def cached(n):\n    return n\n"
    await runtime.reset()
    await runtime.execute("x = 1")
    assert [i.name for i in await runtime.persistable()] == ["x"]
    await runtime.stop()


def test_definitions_need_the_very_object_the_statement_made():
    ns: dict[str, object] = {}
    definitions = Definitions()
    code = "def f():\n    return 1\n"
    exec(code, ns)
    definitions.record(code, ns, ["f"])
    assert definitions.source_for("f", ns["f"]) is not None
    assert definitions.source_for("f", lambda: 1) is None  # rebound some other way
    definitions.record("def g():\n    pass\n", ns, ["g"])  # not bound: nothing recorded
    assert definitions.source_for("g", None) is None


def test_digests_follow_content_and_rows_survive_json():
    rows = [1, 2]
    before = content_digest(rows, 1 << 20)
    assert before is not None and content_digest([1, 2], 1 << 20) == before
    rows.append(3)
    assert content_digest(rows, 1 << 20) != before
    assert content_digest(list(range(100_000)), 1_000) is None  # over the limit: no digest
    assert content_digest(rows, 0) is None
    item = Persistable("x", Keep.VALUE, "list", digest="p1", size=9)
    assert Persistable.from_dict(item.to_dict()) == item
