"""A cell's frame result is kept for the table view (runtime/shipped/results.py), in
process: bound names open by their name, others by `_resultN`, the last KEEP_RESULTS only."""

from __future__ import annotations

import pytest

from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.shipped.results import KEEP_RESULTS


async def test_only_the_last_frame_results_are_kept():
    runtime = IPythonRuntime()
    await runtime.execute("import pandas as pd\ndf = pd.DataFrame({'a': range(20)})")
    names = [(await runtime.execute(f"df.head({n})")).result_frame for n in range(1, 13)]
    assert names == [f"_result{n}" for n in range(1, 13)]
    assert (await runtime.frame_window(names[-1], 0, 50)).total_rows == 12
    for gone in names[: 12 - KEEP_RESULTS]:
        with pytest.raises(KeyError):
            await runtime.frame_window(gone, 0, 5)
    assert (await runtime.frame_window(names[12 - KEEP_RESULTS], 0, 5)).total_rows == 3
    listed = {row.name for row in await runtime.namespace_listing()}
    assert listed == {"df", "pd"} or listed == {"df"}
    failed = await runtime.execute("df.head(2)\n1 / 0")
    assert failed.result_frame is None
    await runtime.reset()
    with pytest.raises(KeyError):
        await runtime.frame_window(names[-1], 0, 5)
