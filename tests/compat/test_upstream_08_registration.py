"""Upstream 0.8's registration contract: a runtime keeps its own copy of each descriptor it
is given, and checking a name free and binding it are one step, so two threads registering
one name never both succeed (the second gets the ValueError)."""

from __future__ import annotations

import threading

import pytest

from cave_tui import IPyKernelRuntime, IPythonRuntime, Variable
from cave_tui.runtime import Runtime


@pytest.mark.parametrize("build", [IPythonRuntime, IPyKernelRuntime])
def test_a_shared_descriptor_is_each_runtimes_own(build: type[Runtime]) -> None:
    shared = Variable("value", 1, "shared descriptor")
    first, second = build(variables=[shared]), build(variables=[shared])
    later = Variable("later", [1], "given after construction")
    first.inject_variable(later)
    first.inject_resources(variables=[Variable("batch", 3)])

    shared.value = 99  # the caller changes its own descriptor afterwards
    later.description = "changed"
    first.update_variable("value", 2)

    assert first.injected["value"].value == 2
    assert second.injected["value"].value == 1
    assert first.injected["later"].description == "given after construction"
    assert first.injected["later"] is not later
    assert shared.value == 99


def test_two_threads_registering_one_name_cannot_both_succeed() -> None:
    entered, release = threading.Event(), threading.Event()

    class SlowVariable(Variable):
        def __copy__(self) -> Variable:  # the runtime copies inside the registration
            if self.value == "first":
                entered.set()
                release.wait(timeout=5)
            return Variable(self.name, self.value)

    runtime = IPythonRuntime()
    outcomes: list[tuple[str, str]] = []

    def register(value: str) -> None:
        try:
            runtime.inject_variable(SlowVariable("shared", value))
            outcomes.append(("ok", value))
        except ValueError:
            outcomes.append(("ValueError", value))

    first = threading.Thread(target=register, args=("first",))
    second = threading.Thread(target=register, args=("second",))
    first.start()
    assert entered.wait(timeout=5)
    second.start()
    second.join(timeout=0.2)  # it waits for the first registration to end
    release.set()
    first.join(timeout=5)
    second.join(timeout=5)

    assert sorted(outcomes) == [("ValueError", "second"), ("ok", "first")]
    assert runtime.injected["shared"].value == "first"
