"""`LocalServer`: starts, watches and stops the embedded model's llama.cpp server process.

The process (cave_tui.models.local.serve) listens on a free loopback port and ends with
its owner (see serve.py), so it never outlives cave. Its stderr goes to a log file: the
session folder's when there is one, else `local-model.log` in cave's data folder (never in a
shared folder such as /tmp), opened without following a symbolic link planted there.
`ensure_running()` starts it, or starts it again after a crash, and waits until `/health`
says the model is loaded; then the prompt state a previous start saved is restored into it
(prompt_cache.py), and `save_prompt()` saves a better one after its first answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import platformdirs

from cave_tui.models.local.prompt_cache import PromptCache
from cave_tui.models.local.weights import Weights

START_TIMEOUT = 120.0  # seconds for the model to load (2-3 s for 1.5B on 2 cores)
SLOT_TIMEOUT = 10.0  # seconds for llama.cpp to read or write a saved prompt state (~13 MB)
DEFAULT_CONTEXT = 8192  # tokens of context the server runs the model with (n_ctx)


class LocalServerError(Exception):
    """The embedded model's server could not start or stopped; the message says why."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


LOG_NAME = "local-model.log"
TAIL_BYTES = 64 * 1024  # of the log read for an error message
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


def default_log_path() -> Path:
    """`local-model.log` in cave's data folder (`CAVE_DATA_DIR`, else the platform's)."""
    override = os.environ.get("CAVE_DATA_DIR")
    folder = Path(override).expanduser() if override else platformdirs.user_data_path("cave")
    return folder / LOG_NAME


def open_log(path: Path) -> int:
    """*path* opened for appending, created private; never through a symbolic link (raises
    `LocalServerError` saying so, or why it cannot be opened)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | _NOFOLLOW, 0o600)
    except OSError as exc:
        why = "it is a symbolic link" if path.is_symlink() else (exc.strerror or str(exc))
        raise LocalServerError(
            f"cannot write the local model server's log {path}: {why} (remove it, or set "
            "CAVE_DATA_DIR to another folder)"
        ) from None


def _tail(path: Path, lines: int = 6) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as fh:
        size = os.fstat(fd).st_size
        fh.seek(max(0, size - TAIL_BYTES))
        text = fh.read().decode(errors="replace").strip().splitlines()
    useful = [line for line in text if line.strip()][-lines:]
    return "\n".join(useful)


class LocalServer:
    """One llama.cpp server process serving *weights* for this cave."""

    def __init__(
        self,
        weights: Weights,
        *,
        log_path: Path | None = None,
        threads: int | None = None,
        context_size: int = DEFAULT_CONTEXT,
        prompt_folder: Path | None = None,
        keep_prompt: bool = True,
    ) -> None:
        """*prompt_folder*: where prompt states are kept (default: beside the weights);
        *keep_prompt*: False never reads or writes one."""
        self.weights = weights
        self.log_path = log_path or default_log_path()
        self.threads = threads or max(1, os.cpu_count() or 2)
        self.context_size = context_size
        self.process: subprocess.Popen[bytes] | None = None
        self.port: int | None = None
        self.starts = 0  # how many times it was started (a restart after a crash counts)
        self.ready_seconds: float | None = None  # time the last start took to be healthy
        self._starting = asyncio.Lock()  # one start at a time (a warm-up and a first message)
        self.prompt_folder, self.keep_prompt = prompt_folder, keep_prompt
        self.prompt_cache: PromptCache | None = None  # this start's, when it has one
        self.restored_tokens = 0  # of a saved prompt state, at the last start
        self._save_due = False  # save the state after the next answer

    @property
    def base_url(self) -> str | None:
        return f"http://127.0.0.1:{self.port}/v1" if self.port is not None else None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def died(self) -> str | None:
        """Why the process is gone ("exit code N"), or None while it runs."""
        if self.process is None or self.process.poll() is None:
            return None
        return f"exit code {self.process.returncode}"

    def log_tail(self) -> str:
        """The last lines of the server's log, introduced by where the log is ("" if empty)."""
        tail = _tail(self.log_path)
        return f"Its log ({self.log_path}) ends:\n{tail}" if tail else ""

    async def ensure_running(self) -> str:
        """The server's base URL, starting it first when it is not running."""
        async with self._starting:
            if not self.alive:
                await self.start()
        assert self.base_url is not None
        return self.base_url

    async def start(self) -> None:
        self.stop()
        started = time.monotonic()
        self.port = free_port()
        log = open_log(self.log_path)
        command = [
            sys.executable, "-m", "cave_tui.models.local.serve",
            "--model", str(self.weights.path), "--port", str(self.port),
            "--alias", self.weights.alias, "--parent", str(os.getpid()),
            "--threads", str(self.threads), "--ctx", str(self.context_size),
        ]  # fmt: skip
        self.prompt_cache, self.restored_tokens, self._save_due = self._cache(), 0, False
        if self.prompt_cache is not None:
            command += ["--slot-dir", str(self.prompt_cache.folder)]
        try:
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
            )
        finally:
            os.close(log)
        self.starts += 1
        await self._wait_healthy(started)
        self.ready_seconds = time.monotonic() - started

    async def _wait_healthy(self, started: float) -> None:
        url = f"http://127.0.0.1:{self.port}/health"
        # Built on a thread: the client's transport imports and its TLS context take a few
        # hundred ms of Python that would hold up the loop (a front end's first answer).
        client = await asyncio.to_thread(
            httpx.AsyncClient, timeout=httpx.Timeout(2.0), trust_env=False
        )
        async with client:
            while time.monotonic() - started < START_TIMEOUT:
                why = self.died()
                if why is not None:
                    raise LocalServerError(
                        f"the local model server could not load {self.weights.path} ({why}). "
                        + self.log_tail()
                    )
                try:
                    if (await client.get(url)).status_code == 200:
                        await self._restore_prompt(client)
                        return
                except httpx.HTTPError:
                    pass  # not listening yet
                await asyncio.sleep(0.1)
        self.stop()
        raise LocalServerError(f"the local model server did not start within {START_TIMEOUT:g}s")

    def _cache(self) -> PromptCache | None:
        """This start's prompt cache, or None (turned off, weights unreadable, no folder)."""
        if not self.keep_prompt:
            return None
        try:
            cache = PromptCache.for_weights(self.weights, self.context_size, self.prompt_folder)
        except OSError:
            return None
        return cache if cache.prepare() else None

    def _slot_url(self, action: str) -> str:
        return f"http://127.0.0.1:{self.port}/slots/0?action={action}"  # one slot: n_parallel 1

    async def _restore_prompt(self, client: httpx.AsyncClient) -> None:
        """Read the saved prompt state into the slot; one llama.cpp refuses is removed, and
        the first answer saves a new one."""
        cache = self.prompt_cache
        if cache is None:
            return
        self._save_due = True
        if not cache.path.is_file():
            return
        try:
            reply = await client.post(
                self._slot_url("restore"), json={"filename": cache.name}, timeout=SLOT_TIMEOUT
            )
            if reply.status_code == 200:
                self.restored_tokens = int(reply.json().get("n_restored", 0))
                return
        except (httpx.HTTPError, ValueError):
            return  # not read in time (a busy machine): the prompt is computed as before
        cache.discard()  # refused by llama.cpp: another build's, or damaged

    async def save_prompt(self, prompt_tokens: int, cached_tokens: int) -> None:
        """After a start's first answer (whose prompt holds cave's system prompt), save the
        slot's state when that prompt computed more tokens than the restored state holds:
        the kept state converges on the longest prefix cave's prompts share, and a short
        unrelated prompt never replaces it. A failure only skips the save."""
        cache = self.prompt_cache
        if not self._save_due or cache is None or not self.alive:
            return
        self._save_due = False
        if prompt_tokens - cached_tokens <= self.restored_tokens:
            return  # the restored state served this prompt as well as this one would
        temporary = cache.temporary_name()
        client = await asyncio.to_thread(httpx.AsyncClient, trust_env=False)
        try:
            async with client:
                reply = await client.post(
                    self._slot_url("save"), json={"filename": temporary}, timeout=SLOT_TIMEOUT
                )
            if reply.status_code == 200:
                cache.commit(temporary)
                return
        except (httpx.HTTPError, OSError):
            pass
        with contextlib.suppress(OSError):
            (cache.folder / temporary).unlink()

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL after 5 s); nothing if it is not running."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
