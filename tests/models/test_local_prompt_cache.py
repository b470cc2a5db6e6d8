"""The embedded model's saved prompt state: a second start does not compute the prompt the
first start answered again; a damaged or foreign file is removed and saved anew."""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path

import pytest

from cave_tui.models.local import LocalModel, LocalServer, Weights
from cave_tui.models.local.prompt_cache import SUFFIX, PromptCache

# One thread and a small window: the server shares 2 cores with the suite's other workers,
# where a second thread spends more time waiting for the first than computing.
THREADS, CONTEXT = 1, 2048
SYSTEM = (
    "You answer questions about data held in Python variables. "
    "Write one python cell, then call final_answer with the result. " * 6
)


def _evaluated(log: Path) -> list[int]:
    """The prompt tokens llama.cpp computed for each request, from its log."""
    text = log.read_text(errors="replace")
    return [int(n) for n in re.findall(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens", text)]


async def _ask(
    weights: Weights, folder: Path, log: Path, question: str, *, system: str = SYSTEM
) -> LocalModel:
    model = LocalModel(
        LocalServer(
            weights, log_path=log, prompt_folder=folder, threads=THREADS, context_size=CONTEXT
        )
    )
    messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    try:
        await model.complete(messages, max_tokens=2, temperature=0)
        await _timings_logged(log)
    finally:
        model.stop()
    return model


async def _timings_logged(log: Path, timeout: float = 30.0) -> None:
    """Until the server has logged the request's timings: it writes them as it sends the
    answer, and a server stopped at once may not have (seen under load)."""
    deadline = time.monotonic() + timeout
    while not (log.exists() and _evaluated(log)) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


@pytest.mark.xdist_group("local-model")  # the embedded model's server takes the cores
@pytest.mark.timeout(400)
async def test_a_second_start_reuses_the_prompt_the_first_one_computed(
    tiny_weights: Weights, tmp_path: Path
) -> None:
    folder = tmp_path / "prompts"
    first = await _ask(tiny_weights, folder, tmp_path / "first.log", "How many rows?")
    assert first.server.restored_tokens == 0
    (saved,) = folder.glob(f"*{SUFFIX}")
    assert not list(folder.glob("*.tmp"))  # the save was renamed into place
    (computed,) = _evaluated(tmp_path / "first.log")
    assert computed > 100
    kept = saved.stat().st_mtime_ns

    second = await _ask(tiny_weights, folder, tmp_path / "second.log", "How many columns?")
    assert second.server.restored_tokens >= computed
    (recomputed,) = _evaluated(tmp_path / "second.log")
    assert recomputed < 20, "the shared system prompt was computed again"
    assert saved.stat().st_mtime_ns == kept  # it served this prompt: not written again


@pytest.mark.xdist_group("local-model")
@pytest.mark.timeout(400)
async def test_a_damaged_or_short_state_is_replaced_and_a_short_prompt_keeps_a_long_one(
    tiny_weights: Weights, tmp_path: Path
) -> None:
    folder = tmp_path / "prompts"
    cache = PromptCache.for_weights(tiny_weights, CONTEXT, folder)
    folder.mkdir()
    cache.path.write_bytes(b"not a llama.cpp slot file" * 100)
    short = "Reply with one word."
    model = await _ask(tiny_weights, folder, tmp_path / "1.log", "yes?", system=short)
    assert model.server.restored_tokens == 0  # refused, removed; the answer still came
    small = cache.path.stat().st_size
    assert small > 100_000  # saved again after the answer

    await _ask(tiny_weights, folder, tmp_path / "2.log", "How many rows?")  # cave-like, longer
    large = cache.path.stat().st_size
    assert large > 3 * small  # the longer prompt's state replaced the short one

    await _ask(tiny_weights, folder, tmp_path / "3.log", "no?", system=short)
    assert cache.path.stat().st_size == large  # a short unrelated prompt never replaces it


def test_a_state_is_offered_only_to_the_same_weights_and_context(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + bytes(100))
    weights = Weights(gguf, "a/b c:../d")
    name = PromptCache.for_weights(weights, 8192, tmp_path).name
    assert re.fullmatch(r"[A-Za-z0-9._-]+", name) and ".." not in name.removesuffix(SUFFIX)
    assert PromptCache.for_weights(weights, 4096, tmp_path).name != name
    gguf.write_bytes(b"GGUF" + bytes(101))  # other weights at the same path
    assert PromptCache.for_weights(weights, 8192, tmp_path).name != name


def test_a_save_removes_files_left_by_killed_saves_and_old_states(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    cache = PromptCache.for_weights(Weights(gguf, "m"), 8192, tmp_path / "p")
    assert cache.prepare() and (cache.folder.stat().st_mode & 0o777) == 0o700
    old = time.time() - 90 * 24 * 3600
    killed, stale, fresh = (cache.folder / n for n in ("x.slot.1-2.tmp", "y.slot", "z.slot"))
    for path in (killed, stale, fresh):
        path.write_bytes(b"x")
    for path in (killed, stale):
        os.utime(path, (old, old))
    temporary = cache.temporary_name()
    (cache.folder / temporary).write_bytes(b"state")
    cache.commit(temporary)
    assert cache.path.read_bytes() == b"state"
    assert sorted(p.name for p in cache.folder.iterdir()) == sorted([cache.name, "z.slot"])
