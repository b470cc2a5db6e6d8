"""ColumnNotAdded: the column the request asks to add is missing."""

import pandas as pd

from cave_tui.agent.policies.column_not_added import column_note, columns_not_added
from cave_tui.runtime.shipped.summary import summarize


def test_a_column_the_request_asks_to_add_is_checked():
    rows = [summarize("weather", pd.DataFrame({"month": [1, 2]}))]
    ask = "Add a column `season` to `weather` by applying `season` to its month column."
    assert columns_not_added(rows, ask) == [("weather", "season")]
    rows = [summarize("weather", pd.DataFrame({"month": [1, 2], "season": ["w", "w"]}))]
    assert columns_not_added(rows, ask) == []
    assert "weather['season'] = ..." in column_note(("weather", "season"))
