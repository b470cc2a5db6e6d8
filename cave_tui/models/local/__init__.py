"""The embedded local model: a GGUF served by a llama.cpp process that cave owns.

`LocalModel.create()` finds the weights (weights.py), `LocalServer` runs the process
(server.py, serve.py). Needs the `local` extra (xllamacpp); nothing here imports it.
"""

from __future__ import annotations

from cave_tui.models.local.model import LocalModel
from cave_tui.models.local.server import LocalServer, LocalServerError
from cave_tui.models.local.weights import Weights, WeightsError, bundled_installed, find_weights

__all__ = [
    "LocalModel",
    "LocalServer",
    "LocalServerError",
    "Weights",
    "WeightsError",
    "bundled_installed",
    "find_weights",
]
