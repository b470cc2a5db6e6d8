"""Upstream 0.8: a function's annotated classes are injected with it even when one of its
annotations names something its module lacks, and a class made by `exec` counts too."""

from __future__ import annotations

import asyncio

from cave_tui.runtime import Function, IPythonRuntime

SOURCE = (
    "from __future__ import annotations\n"
    "class Known:\n"
    "    pass\n"
    "def consume(value: Known, missing: Missing) -> Known:\n"
    "    return value\n"
)


def test_one_unresolvable_annotation_does_not_hide_the_others() -> None:
    namespace: dict[str, object] = {}
    exec(SOURCE, namespace)
    runtime = IPythonRuntime(functions=[Function(namespace["consume"])])  # type: ignore[arg-type]

    result = asyncio.run(runtime.execute("created = consume(Known(), None)"))

    assert result.success, result.output
    assert "Known" in runtime.automatic_types()
    assert asyncio.run(runtime.retrieve("Known")) is namespace["Known"]


def test_builtin_classes_are_still_not_injected() -> None:
    def count(items: list[int], label: str) -> int:
        return len(items)

    assert IPythonRuntime(functions=[Function(count)]).automatic_types() == set()
