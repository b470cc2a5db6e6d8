"""Upstream 0.8's runtime contract on both cave runtimes: `bind_unique`, all-or-nothing
`inject_resources`, raw bindings (`inject_into_namespace`), `get_from_namespace` raising
KeyError. Values always come back through cave's safe retrieval (no unpickling here)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from cave_tui.runtime import IPythonRuntime, Runtime, Variable
from tests.runtime.kernel.conftest import make_runtime


@pytest.fixture(scope="module")
def kernel() -> Iterator[Runtime]:
    runtime = make_runtime()
    asyncio.run(runtime.start())
    yield runtime
    asyncio.run(runtime.stop())


@pytest.fixture(params=["ipython", "kernel"])
def runtime(request: pytest.FixtureRequest) -> Iterator[Runtime]:
    if request.param == "ipython":
        yield IPythonRuntime(variables=[Variable("data", [1, 2], "input")])
        return
    shared: Runtime = request.getfixturevalue("kernel")
    asyncio.run(shared.reset())
    for name in list(shared.injected):
        shared._injected.pop(name)
    shared.inject(Variable("data", [1, 2], "input"))
    yield shared


async def test_bind_unique_takes_the_first_free_name_and_keeps_it(runtime: Runtime) -> None:
    await runtime.execute("_output_1 = 'the model made this one'")
    first = await runtime.bind_unique("_output", "x" * 10)
    second = await runtime.bind_unique("_output", "second")
    assert (first, second) == ("_output_2", "_output_3")
    assert await runtime.get_from_namespace("_output_1") == "the model made this one"
    assert await runtime.get_from_namespace("_output_2") == "x" * 10
    assert await runtime.bind_unique("_output", "later", start=7) == "_output_7"
    # A raw binding: never described to the model, kept across a reset, listed as a value.
    assert "_output_2" not in runtime.describe_variables()
    await runtime.reset()
    assert await runtime.get_from_namespace("_output_3") == "second"
    listed = {row.name for row in await runtime.namespace_summary()}
    assert {"_output_2", "_output_3", "_output_7"} <= listed


async def test_concurrent_bind_unique_never_shares_a_name(runtime: Runtime) -> None:
    names = await asyncio.gather(*(runtime.bind_unique("_part", i) for i in range(4)))
    assert sorted(names) == ["_part_1", "_part_2", "_part_3", "_part_4"]


async def test_bind_unique_refuses_a_prefix_or_start_that_names_nothing(runtime: Runtime) -> None:
    with pytest.raises(ValueError, match="prefix"):
        await runtime.bind_unique("not a name", 1)
    with pytest.raises(ValueError, match="start"):
        await runtime.bind_unique("_output", 1, start=0)


async def test_inject_resources_is_all_or_nothing(runtime: Runtime) -> None:
    def helper() -> int:
        return 1

    from cave_tui.runtime import Function

    with pytest.raises(ValueError, match="Variable 'data' already exists"):
        runtime.inject_resources(
            functions=[Function(helper)],
            variables=[Variable("fresh", 1), Variable("data", [9])],
        )
    with pytest.raises(ValueError, match="Binding 'twice' already exists"):
        runtime.inject_resources(bindings=[("twice", 1), ("twice", 2)])
    for name in ("helper", "fresh", "twice"):
        assert name not in runtime.injected
        with pytest.raises(KeyError):
            await runtime.get_from_namespace(name)
    assert await runtime.get_from_namespace("data") == [1, 2]

    runtime.inject_resources(functions=[Function(helper)], bindings=[("secret", 42)])
    result = await runtime.execute("got = helper() + secret")
    assert result.success, result.error_text
    assert await runtime.get_from_namespace("got") == 43
    assert "secret" not in runtime.describe_variables()
    assert "helper" in runtime.describe_functions()


async def test_inject_resources_binds_nothing_when_a_value_cannot_be_sent(kernel: Runtime) -> None:
    await kernel.reset()
    from cave_tui.runtime.kernel.errors import InjectionError

    endless = (i for i in range(3))  # a generator cannot cross to the kernel
    with pytest.raises(InjectionError, match="generator"):
        kernel.inject_resources(variables=[Variable("fine", 1), Variable("bad", endless)])
    assert "fine" not in kernel.injected
    with pytest.raises(KeyError):
        await kernel.get_from_namespace("fine")


async def test_a_value_the_kernel_cannot_take_raises_both_generations_errors(
    kernel: Runtime,
) -> None:
    """0.8 code catches RuntimeExecutionError for one binding and TypeError for a batch;
    cave's InjectionError is both, and the root package exports the name."""
    import cave_tui
    from cave_tui.runtime import RuntimeExecutionError

    assert cave_tui.RuntimeExecutionError is RuntimeExecutionError
    await kernel.reset()
    with pytest.raises(RuntimeExecutionError, match="cannot pickle"):
        await kernel.bind_unique("_held", (i for i in range(2)))
    with pytest.raises(TypeError, match="cannot pickle"):
        kernel.inject_resources(variables=[Variable("one", 1), Variable("two", (i for i in ""))])
    # the failed binding gave its name back
    assert await kernel.bind_unique("_held", "kept") == "_held_1"


async def test_inject_into_namespace_is_a_raw_binding(runtime: Runtime) -> None:
    runtime.inject_into_namespace("store", {"k": 1})
    runtime.inject_into_namespace("store", {"k": 2})  # its own raw binding: replaced
    with pytest.raises(ValueError, match="Binding 'store' already exists"):
        runtime.inject_into_namespace("store", {}, replace=False)
    with pytest.raises(ValueError, match="already exists"):  # a described name is never taken
        runtime.inject_into_namespace("data", [])
    assert await runtime.get_from_namespace("store") == {"k": 2}
    assert "store" not in runtime.describe_variables()


async def test_get_from_namespace_raises_key_error_for_a_missing_name(runtime: Runtime) -> None:
    await runtime.execute("made = None")
    assert await runtime.get_from_namespace("made") is None  # None is a value, not absence
    with pytest.raises(KeyError):
        await runtime.get_from_namespace("never_bound")
