"""The front ends' tests: each runs in its own config and data folders."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated(isolated_dirs: Path) -> Path:
    """Every test here runs in its own folders (see tests/helpers/isolation.py)."""
    return isolated_dirs
