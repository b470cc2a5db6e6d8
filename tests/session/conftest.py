from __future__ import annotations

import pandas as pd
import pytest


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame({"id": [1, 2, 3], "amount": [9.5, 3.0, 4.25], "who": ["a", "b", "c"]})
