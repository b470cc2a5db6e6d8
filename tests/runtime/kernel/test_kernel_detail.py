"""The detail view of a kernel variable is computed in the kernel: the object stays there."""

from __future__ import annotations

import pytest

from cave_tui.runtime.shipped.detail import Detail


async def test_detail_of_a_large_frame_never_retrieves_it(kernel, monkeypatch):
    await kernel.execute(
        "import numpy as np, pandas as pd\n"
        "wide = pd.DataFrame({f'c{i}': np.arange(300_000) * i for i in range(45)})"
    )

    async def no_retrieve(name):
        raise AssertionError(f"{name} was copied to the host")

    monkeypatch.setattr(kernel, "retrieve", no_retrieve)
    detail = await kernel.detail("wide")
    assert isinstance(detail, Detail) and detail.is_frame
    assert detail.shape == "300000x45" and len(detail.head) == 20
    assert detail.head[1][:4] == ["1", "0", "1", "2"]  # index, then row 1 of c0, c1, c2
    assert "showing 40 of 45 columns" in detail.notes
    assert "describe() of a random sample of 100,000 rows" in detail.notes
    assert detail.describe_columns[:2] == ["c0", "c1"]


async def test_detail_of_a_missing_name_is_a_key_error(kernel):
    await kernel.execute("present = 1")
    with pytest.raises(KeyError, match="did you mean present"):
        await kernel.detail("presnt")


def test_a_detail_from_the_kernel_keeps_only_strings():
    detail = Detail.from_dict(
        {"name": "x", "type_name": "list", "head": [[1, object]], "size_bytes": "9", "evil": 1}
    )
    assert detail.head == [["1", "<class 'object'>"]] and detail.size_bytes is None


async def test_a_frame_result_is_kept_in_the_kernel_for_the_table_view(kernel):
    """A cell's frame result opens by the name bound to it, else by `_resultN`, which the
    kernel keeps (hidden from the listing); any other result opens nothing."""
    made = await kernel.execute(
        "import pandas as pd\ndf = pd.DataFrame({'a': range(100)})\ndf.head(7)"
    )
    assert made.success and made.result_frame is not None
    assert made.result_frame.startswith("_result")
    window = await kernel.frame_window(made.result_frame, 0, 10)
    assert window.total_rows == 7
    assert made.result_frame not in {row.name for row in await kernel.namespace_listing()}
    assert (await kernel.execute("df")).result_frame == "df"
    assert (await kernel.execute("len(df)")).result_frame is None
