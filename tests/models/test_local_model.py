"""The embedded model: weights found and checked, a real llama.cpp server cave owns, restarts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from cave_tui.models import ModelError, TextDelta, model_from_spec
from cave_tui.models.local import LocalModel, LocalServer, LocalServerError, Weights
from cave_tui.models.local.weights import (
    BUNDLED_FILE,
    WeightsError,
    assemble_bundled,
    bundled_weights,
    find_weights,
)

# The embedded model's server takes the cores: one at a time (tests/helpers/parallel.py).
# A real model on CPU, beside the other workers: minutes, not the suite's 120 s per test.
pytestmark = [pytest.mark.xdist_group("local-model"), pytest.mark.timeout(400)]


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_gone(pid: int, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        time.sleep(0.1)
    return False


def test_parts_that_do_not_add_up_are_refused_and_leave_nothing(tmp_path: Path) -> None:
    parts = []
    for i in range(3):
        part = tmp_path / f"part{i}.bin"
        part.write_bytes(b"GGUF" + bytes(1000))
        parts.append(part)
    target = tmp_path / "models" / BUNDLED_FILE
    with pytest.raises(WeightsError, match="sha256 mismatch"):
        assemble_bundled(target, parts)
    assert list(target.parent.iterdir()) == []


def test_a_damaged_cached_model_is_refused_with_what_to_do(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CAVE_MODELS_DIR", str(tmp_path))
    (tmp_path / BUNDLED_FILE).write_bytes(b"GGUF" + bytes(4096))  # a truncated download
    with pytest.raises(WeightsError, match=r"damaged.*delete it"):
        bundled_weights()


def test_missing_and_foreign_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(WeightsError, match="no model file"):
        find_weights(str(tmp_path / "nope.gguf"))
    notes = tmp_path / "notes.gguf"
    notes.write_text("just text")
    with pytest.raises(WeightsError, match="not a GGUF"):
        find_weights(str(notes))
    with pytest.raises(ValueError, match="not a GGUF"):  # the spec path says the same
        model_from_spec(f"local:{notes}")


def test_hub_weights_come_from_huggingface_hubs_cache(tmp_path: Path, monkeypatch) -> None:
    """No hub is reachable here: a file already in huggingface_hub's cache is found offline."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import importlib

    import huggingface_hub.constants

    importlib.reload(huggingface_hub.constants)
    commit = "a" * 40
    repo = tmp_path / "hub" / "models--someone--tiny-GGUF"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "tiny-q4.gguf").write_bytes(b"GGUF" + bytes(64))
    try:
        found = find_weights("hf:someone/tiny-GGUF/tiny-q4.gguf")
        assert found.path.read_bytes().startswith(b"GGUF")
        assert found.alias == "tiny-q4"
        with pytest.raises(WeightsError, match="could not fetch"):
            find_weights("hf:someone/absent-GGUF/x.gguf")
        with pytest.raises(WeightsError, match="OWNER/REPO/FILE"):
            find_weights("hf:just-a-name")
    finally:
        monkeypatch.undo()
        importlib.reload(huggingface_hub.constants)


async def test_a_truncated_gguf_is_a_clear_error(tiny_weights: Weights, tmp_path: Path) -> None:
    head = tmp_path / "truncated.gguf"
    with tiny_weights.path.open("rb") as f:
        head.write_bytes(f.read(2 << 20))
    server = LocalServer(Weights(head, "t"), log_path=tmp_path / "server.log")
    with pytest.raises(LocalServerError, match=r"could not load .*truncated\.gguf.*exit code"):
        await server.start()
    assert not server.alive


async def test_the_warm_up_builds_its_http_client_off_the_event_loop(
    tiny_weights: Weights, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm-up starts with the runtime: building the client (its transport's imports,
    its TLS context) on the loop would hold up a front end's first answer."""
    import threading

    import httpx

    from cave_tui.models.local import server as server_module

    built_on = []

    class Recording(httpx.AsyncClient):
        def __init__(self, *args: object, **kwargs: object) -> None:
            built_on.append(threading.get_ident())
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(server_module.httpx, "AsyncClient", Recording)
    head = tmp_path / "truncated.gguf"
    with tiny_weights.path.open("rb") as f:
        head.write_bytes(f.read(2 << 20))  # fails fast: the client is built, then it ends
    server = LocalServer(Weights(head, "t"), log_path=tmp_path / "server.log")
    with pytest.raises(LocalServerError):
        await server.start()
    assert built_on and threading.get_ident() not in built_on


async def test_a_crash_mid_answer_is_an_error_and_the_next_message_restarts_it(
    tiny_weights: Weights, tmp_path: Path
) -> None:
    model = LocalModel(LocalServer(tiny_weights, log_path=tmp_path / "local.log", threads=1))
    count = [{"role": "user", "content": "Count from 1 to 200, one number per line."}]
    short = [{"role": "user", "content": "Reply with the single word: yes"}]
    try:
        with pytest.raises(ModelError, match=r"stopped.*next message starts it again"):
            async for item in model.stream(count, max_tokens=400, temperature=0):
                if isinstance(item, TextDelta) and model.server.process is not None:
                    model.server.process.send_signal(signal.SIGKILL)  # dies mid-answer
        assert (tmp_path / "local.log").stat().st_size > 0  # llama.cpp's log went there
        text, completion = await model.complete(short, max_tokens=8, temperature=0)
        assert text.strip() and completion.usage.completion_tokens > 0
        assert model.server.starts == 2
    finally:
        model.stop()


def test_kill_9_of_cave_leaves_no_server(tiny_weights: Weights, tmp_path: Path) -> None:
    """The real `cave run` starts the embedded model's server; `kill -9` of cave ends it too."""
    cave = str(Path(sys.executable).with_name("cave"))
    env = {**os.environ, "CAVE_CONFIG_DIR": str(tmp_path / "config")}
    owner = subprocess.Popen(
        [cave, "run", "Count from 1 to 500.", "--gguf", str(tiny_weights.path)],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        server = _wait_for_server(owner.pid)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        assert _wait_gone(server.pid, 30), "the model server outlived the cave that started it"
    finally:
        owner.kill()


def _wait_for_server(pid: int, seconds: float = 60.0) -> psutil.Process:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for child in psutil.Process(pid).children(recursive=True):
            serving = "cave_tui.models.local.serve" in " ".join(child.cmdline())
            if serving and any(c.status == psutil.CONN_LISTEN for c in child.net_connections()):
                return child  # loaded and listening: it waits on its parent now
        time.sleep(0.1)
    raise AssertionError("cave did not start the model server")


def test_cave_run_answers_with_the_embedded_model_by_default(
    weights: Weights, tmp_path: Path
) -> None:
    """No --model, no key: `cave run` uses the installed embedded model on a real frame."""
    import json

    import pandas as pd

    frame = pd.DataFrame(
        {"species": ["Adelie", "Gentoo", "Adelie", "Chinstrap", "Gentoo", "Adelie"]}
    )
    frame.to_parquet(tmp_path / "penguins.parquet")
    env = {**os.environ, "CAVE_LOCAL_MODEL": "", "CAVE_CONFIG_DIR": str(tmp_path / "config")}
    env["CAVE_LOCAL_THREADS"] = "1"  # the suite's other workers share the cores
    cave = str(Path(sys.executable).with_name("cave"))
    task = "How many rows does penguins have?"
    result = subprocess.run(
        [cave, "run", task, "--inject", "penguins.parquet", "--json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    (answer,) = [e["content"] for e in events if e["type"] == "final_response"]
    assert "6" in answer
    (session,) = (tmp_path / "sessions").iterdir()
    assert (session / "local-model.log").stat().st_size > 0
