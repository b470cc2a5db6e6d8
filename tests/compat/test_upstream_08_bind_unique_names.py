"""Upstream 0.8: `bind_unique` hands out the names Python binds. Identifiers are
NFKC-normalised (U+212A KELVIN SIGN binds `K`), so a prefix is normalised first and the
model's code reaches the value by the name returned."""

from __future__ import annotations

import asyncio

from cave_tui.runtime import IPythonRuntime

KELVIN = chr(0x212A)


def test_a_prefix_is_bound_as_python_normalises_it() -> None:
    runtime = IPythonRuntime()

    async def go() -> tuple[str, str, str]:
        first = await runtime.bind_unique(KELVIN, "first")
        second = await runtime.bind_unique(KELVIN, "second")
        result = await runtime.execute("print(K_1, K_2)")
        return first, second, result.output

    first, second, output = asyncio.run(go())

    assert (first, second) == ("K_1", "K_2")
    assert first.isascii() and second.isascii()
    assert output.strip() == "first second"
