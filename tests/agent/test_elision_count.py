"""Issue 18, item 13: the observation says how much output it leaves out, counting what the
runtime's capture had already dropped (it said "395,137 characters elided" of 49.6 M)."""

from __future__ import annotations

import re

from cave_tui.agent.observation import cut_middle, shape_result
from cave_tui.runtime.capture import DROPPED_MARKER
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.shipped import bootstrap


def _elided(observation: str) -> int:
    (count,) = re.findall(r"\[… ([\d,]+) characters elided …\]", observation)
    return int(count.replace(",", ""))


async def test_the_elided_count_includes_what_the_capture_dropped():
    runtime = IPythonRuntime(capture_chars=20_000)
    printed = 1000 * 2000 - 1  # the lines, less the last newline (an observation has none)
    result = await runtime.execute("for _ in range(1000):\n    print('x' * 1999)")
    assert result.output_truncated_chars > 1_900_000  # the capture kept only its head and tail
    observation = shape_result(result, 5000)
    shown = observation.removeprefix("Output:\n").split("\n[changed")[0]
    kept = len(shown) - len(re.search(r"\n\[… [\d,]+ characters elided …\]\n", shown)[0])
    assert _elided(observation) == printed - kept
    assert "dropped" not in observation  # the capture's own marker went with the cut


def test_a_runtime_marker_that_is_kept_is_not_counted_twice():
    text = "a" * 100 + DROPPED_MARKER.format(n=5000) + "b" * 100
    assert cut_middle(text, 10_000, dropped=5000) == text  # short enough: shown as it is
    cut = cut_middle(text, 150, dropped=5000)
    assert _elided(cut) == len(text) - 150 - len(DROPPED_MARKER.format(n=5000)) + 5000


def test_the_kernel_writes_the_same_marker():
    assert bootstrap.MARKER == DROPPED_MARKER
