"""The app layer's tests: each runs in its own config and data folders."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest


@pytest.fixture(autouse=True)
def _isolated(isolated_dirs: Path) -> Path:
    """Every test here runs in its own folders (see tests/helpers/isolation.py)."""
    return isolated_dirs


@pytest.fixture
def frame() -> pd.DataFrame:
    """A small frame with an int, a float and a text column."""
    return pd.DataFrame({"id": [1, 2, 3], "amount": [9.5, 3.0, 4.25], "who": ["a", "b", "c"]})
