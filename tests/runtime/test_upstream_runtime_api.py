"""Upstream CaveAgent's runtime API (names, signatures, defaults, errors) on cave's runtimes.

Host code written for `cave_agent.runtime` runs with the import renamed (issue 17):
these tests drive a real `IPythonRuntime`, and the kernel runtime for the calls it shares.
"""

import asyncio
import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

import pytest

import cave_tui.runtime as rt_pkg
from cave_tui.runtime import (
    ErrorFeedbackMode,
    ExecutionResult,
    Function,
    IPythonRuntime,
    Type,
    TypeSchemaExtractor,
    Variable,
)
from cave_tui.security import SecurityChecker, SecurityError
from tests.runtime.kernel.conftest import make_runtime


class Light:
    """A smart light."""

    def __init__(self, name: str = "Light") -> None:
        self.name = name
        self.is_on = False

    def turn_on(self) -> str:
        """Switch it on."""
        self.is_on = True
        return f"{self.name} on"


class Lock:
    def lock(self, code: int | None = None) -> bool:
        return True


@dataclass
class Point:
    """A point."""

    x: float
    y: float = 0.0


class Level(Enum):
    LOW = 1
    HIGH = 2


# -- names and signatures ---------------------------------------------------------------------
UPSTREAM_RUNTIME_ALL = {
    "Runtime", "IPythonRuntime", "IPyKernelRuntime", "ExecutionResult", "ErrorFeedbackMode",
    "Variable", "Function", "Type", "TypeSchemaExtractor",
}  # fmt: skip


def test_every_upstream_runtime_name_is_exported():
    assert set(rt_pkg.__all__) >= UPSTREAM_RUNTIME_ALL
    for name in UPSTREAM_RUNTIME_ALL:
        assert getattr(rt_pkg, name) is not None


def test_constructors_take_upstreams_parameters_in_upstreams_order():
    from cave_tui.runtime.kernel import IPyKernelRuntime

    for cls in (IPythonRuntime, IPyKernelRuntime):
        params = list(inspect.signature(cls).parameters.values())
        assert [p.name for p in params[:5]] == [
            "functions", "variables", "types", "security_checker", "error_feedback_mode",
        ]  # fmt: skip
        assert params[4].default is ErrorFeedbackMode.PLAIN


def test_error_feedback_mode_values():
    assert ErrorFeedbackMode.PLAIN.value == "Plain"
    assert ErrorFeedbackMode.MINIMAL.value == "Minimal"


def test_positional_construction_as_upstream_writes_it():
    def double(x: int) -> int:
        return 2 * x

    runtime = IPythonRuntime([Function(double)], [Variable("n", 21)])
    assert set(runtime.injected) == {"double", "n"}


# -- ExecutionResult ----------------------------------------------------------------------------
def test_execution_result_built_the_upstream_way():
    ok = ExecutionResult(stdout="hi\n")
    assert ok.success and ok.error is None and ok.stdout == "hi\n"
    assert ExecutionResult().stdout is None
    failed = ExecutionResult(error=ValueError("bad"))
    assert not failed.success and isinstance(failed.error, ValueError)
    assert failed.error_type == "ValueError" and failed.error_text == "ValueError: bad"


async def test_a_failed_cell_has_the_exception_and_the_text():
    runtime = IPythonRuntime()
    result = await runtime.execute("print('before')\n1 / 0")
    assert not result.success
    assert isinstance(result.error, ZeroDivisionError)  # upstream: the exception itself
    assert result.error_text is not None and result.error_text.startswith("Traceback")
    assert result.error_text.endswith("ZeroDivisionError: division by zero")
    assert result.output == "before\n"
    assert result.stdout == "before\n" + result.error_text  # what the model is shown
    ok = await runtime.execute("x = 5 + 3")
    assert ok.success and ok.error is None and ok.stdout is None
    await runtime.stop()


async def test_minimal_feedback_drops_the_frames():
    runtime = IPythonRuntime(error_feedback_mode=ErrorFeedbackMode.MINIMAL)
    result = await runtime.execute("def f():\n    return {}['k']\nf()")
    assert result.error_text == "KeyError: 'k'"
    assert "Traceback" not in (result.stdout or "")
    assert isinstance(result.error, KeyError)
    await runtime.stop()


async def test_a_refused_cell_carries_a_security_error():
    runtime = IPythonRuntime(security_checker=SecurityChecker.for_policy("strict"))
    result = await runtime.execute("import subprocess")
    assert not result.success and result.blocked
    assert isinstance(result.error, SecurityError)
    assert result.error.message and "subprocess" in result.error.message
    assert result.error_text == str(result.error)
    await runtime.stop()


# -- inject_*, duplicates, automatic types ---------------------------------------------------------
def test_inject_methods_refuse_a_duplicate_as_upstream():
    runtime = IPythonRuntime(types=[Type(Light)])
    with pytest.raises(ValueError, match="Type 'Light' already exists"):
        runtime.inject_type(Type(Light))
    runtime.inject_variable(Variable("v", 1))
    with pytest.raises(ValueError, match="Variable 'v' already exists"):
        runtime.inject_variable(Variable("v", 2))

    def f() -> None: ...

    runtime.inject_function(Function(f))
    with pytest.raises(ValueError, match="Function 'f' already exists"):
        runtime.inject_function(Function(f))


async def test_classes_an_item_refers_to_are_injected_without_schema():
    def make_lock(light: Light, where: list[Point] | None = None) -> Lock:
        return Lock()

    runtime = IPythonRuntime(
        functions=[Function(make_lock)],
        variables=[Variable("level", Level.LOW), Variable("n", 3)],
    )
    for cls in (Light, Point, Lock, Level):
        assert await runtime.get_from_namespace(cls.__name__) is cls
        assert runtime.injected[cls.__name__].include_schema is False
    assert "int" not in runtime.injected and "list" not in runtime.injected
    assert runtime.describe_types() == "No types available"
    listed = await runtime.names()
    assert "Light" not in listed and "make_lock" in listed  # bound, not listed
    await runtime.stop()


async def test_isinstance_in_a_cell_after_inject_variable():
    runtime = IPythonRuntime()
    runtime.inject_variable(Variable("device", Light("Hall"), "a device"))
    result = await runtime.execute("ok = isinstance(device, Light)\nmsg = device.turn_on()")
    assert result.success, result.error_text
    assert await runtime.get_from_namespace("ok") is True
    assert await runtime.retrieve("msg") == "Hall on"
    await runtime.stop()


def test_an_explicit_type_wins_over_the_automatic_one():
    runtime = IPythonRuntime(
        variables=[Variable("light", Light())], types=[Type(Light, "explicit")]
    )
    assert runtime.injected["Light"].description == "explicit"
    assert "Light:" in runtime.describe_types() and "turn_on()" in runtime.describe_types()


# -- describe_* ---------------------------------------------------------------------------------
def test_describe_texts_have_upstreams_layout():
    async def fetch(url: str, retries: int = 3) -> dict:
        """Fetch a URL.

        Returns the JSON."""
        return {}

    runtime = IPythonRuntime(
        functions=[Function(fetch, "gets data")],
        variables=[Variable("numbers", [1, 2], "the input"), Variable("slot")],
        types=[Type(Point), Type(Level), Type(Light, include_doc=False)],
    )
    assert runtime.describe_functions() == (
        "- function: async fetch(url: str, retries: int = 3) -> dict\n"
        "  description: gets data\n"
        "  doc:\n    Fetch a URL.\n    \n            Returns the JSON."  # raw lines, as upstream
    )
    assert runtime.describe_variables() == (
        "- name: numbers\n  type: list\n  description: the input\n- name: slot\n  type: NoneType"
    )
    types = runtime.describe_types()
    assert "Point:\n  doc: A point.\n  fields:\n    - x: float\n    - y: float = 0.0" in types
    assert "Level (Enum):\n  - LOW = 1\n  - HIGH = 2" in types
    assert "Light:\n  methods:\n    - turn_on() -> str" in types and "smart" not in types
    empty = IPythonRuntime()
    assert empty.describe_functions() == "No functions available"
    assert empty.describe_variables() == "No variables available"
    assert empty.describe_types() == "No types available"


def test_string_annotations_are_resolved_for_automatic_types():
    namespace: dict = {}
    exec(
        "from __future__ import annotations\ndef use(light: Light) -> Lock: ...",
        {"Light": Light, "Lock": Lock},
        namespace,
    )
    runtime = IPythonRuntime(functions=[Function(namespace["use"])])
    assert {"Light", "Lock"} <= set(runtime.injected)


def test_items_str_and_attributes_as_upstream():
    def hello(name: str) -> str:
        """Say hello."""
        return name

    fn = Function(hello)
    assert fn.signature == "hello(name: str) -> str" and fn.doc == "Say hello."
    assert Function(hello, include_doc=False).doc is None
    assert str(Type(Light, "a lamp")).startswith("Light:\n  description: a lamp\n  doc: A smart")
    assert str(Type(Light, include_schema=False, include_doc=False)) == ""
    assert str(Type(Light, include_schema=False)) == "Light:\n  doc: A smart light."
    assert Variable("v").type_name == "NoneType"
    assert TypeSchemaExtractor.annotation(int | None) == "Optional[int]"
    assert "code: Optional[int] = None" in str(Type(Lock))


# -- namespace access, update_variable ------------------------------------------------------------
async def test_get_from_namespace_and_update_variable():
    runtime = IPythonRuntime(variables=[Variable("data", [1, 2], "input"), Variable("out")])
    await runtime.execute("total = sum(data)")
    assert await runtime.get_from_namespace("total") == 3
    with pytest.raises(KeyError):  # 0.8's answer (0.7's in-process one was None)
        await runtime.get_from_namespace("nothing_here")
    runtime.update_variable("data", [5, 5])
    assert await runtime.retrieve("data") == [5, 5]
    assert runtime.injected["data"].description == "input"
    runtime.update_variable("out", "anything")  # None before: any type may follow
    with pytest.raises(KeyError, match=r"Variable 'nope' does not exist\. Available variables"):
        runtime.update_variable("nope", 1)
    with pytest.raises(TypeError, match=r"type mismatch\. Expected list, got str"):
        runtime.update_variable("data", "text")
    await runtime.stop()


# -- the kernel runtime: the same calls ------------------------------------------------------------
@pytest.fixture(scope="module")
def kernel_runtime() -> Iterator[object]:
    runtime = make_runtime()
    asyncio.run(runtime.start())
    yield runtime
    asyncio.run(runtime.stop())


async def test_kernel_runtime_speaks_the_same_api(kernel_runtime):
    runtime = kernel_runtime

    class Sensor:
        def __init__(self, reading: float) -> None:
            self.reading = reading

    def read(sensor: Sensor) -> float:
        return sensor.reading

    runtime.inject_function(Function(read, "reads a sensor"))
    runtime.inject_variable(Variable("limit", 10, "the limit"))
    assert "Sensor" in runtime.injected and runtime.injected["Sensor"].automatic
    with pytest.raises(ValueError, match="Variable 'limit' already exists"):
        runtime.inject_variable(Variable("limit", 3))
    assert "- function: read(sensor:" in runtime.describe_functions()
    assert runtime.describe_variables() == "- name: limit\n  type: int\n  description: the limit"

    result = await runtime.execute("value = read(Sensor(2.5)) + limit")
    assert result.success, result.error_text
    assert await runtime.get_from_namespace("value") == 12.5
    with pytest.raises(KeyError):  # upstream's kernel runtime raises too
        await runtime.get_from_namespace("not_there")
    runtime.update_variable("limit", 20)
    assert await runtime.retrieve("limit") == 20
    with pytest.raises(TypeError, match="Expected int, got str"):
        runtime.update_variable("limit", "x")

    failed = await runtime.execute("1 / 0")
    assert not failed.success and failed.error_type == "ZeroDivisionError"
    assert "ZeroDivisionError" in str(failed.error) and "ZeroDivisionError" in failed.stdout
    assert failed.error_text is not None and failed.error_text.startswith("Traceback")

    runtime.error_feedback_mode = ErrorFeedbackMode.MINIMAL
    try:
        minimal = await runtime.execute("def g():\n    return {}['k']\ng()")
        assert minimal.error_text == "KeyError: 'k'"
    finally:
        runtime.error_feedback_mode = ErrorFeedbackMode.PLAIN
