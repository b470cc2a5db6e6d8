"""Decoding kernel JSON and pickles in a separate process that can be killed.

A JSON or pickle payload of `WORKER_FROM` bytes or more is read first by a warm worker
process (`decode_worker.main`) with its own memory limit
(`RLIMIT_AS`, set per payload from the decode limit) and killed at the decode timeout: a C
loop the kernel found cannot freeze or exhaust the host. The worker reads the payload within
the host's budget (`bounded_pickle`, `DecodeBudget.json`) and answers with what it used and,
for a pickle, the value pickled again by the standard pickler (only allow-listed types, no
call of a builtin type on kernel data), which the host loads with `SafeUnpickler` in C; for
JSON the host then parses the bytes it already has. Arrow payloads (frames, arrays) never go
to the worker: their sizes are read from headers and checked before anything is built, and
copying them to another process would cost the transfer its speed (docs/kernel.md).
Smaller payloads are read in the host by the same bounded readers: they cannot build much.
"""

from __future__ import annotations

import atexit
import io
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from cave_tui.runtime.kernel.decode_limits import DecodeBudget
from cave_tui.runtime.kernel.limits import kernel_environment
from cave_tui.runtime.shipped.transport import (
    DecodeLimitExceeded,
    SafeUnpickler,
    TransferError,
    UnsafeObjectError,
    decode_leaves,
    json_int,
)

WORKER_FROM = 4096  # bytes of JSON or pickle from which the worker decodes
WORKER_CODECS = ("json", "pickle.safe", "pickle.arrow")
PART = 20_000  # entries of a large container per part the host loads at a time
_SHAPES: dict[str, Any] = {
    "list": list, "tuple": tuple, "set": set, "frozenset": frozenset, "dict": dict
}  # fmt: skip
HEADROOM = 512 * 1024 * 1024  # address space the worker gets beyond what it maps already
_KINDS: dict[str, type[TransferError]] = {
    "limit": DecodeLimitExceeded,
    "unsafe": UnsafeObjectError,
    "malformed": TransferError,
}


def uses_worker(codec: str, buffers: list[Any]) -> bool:
    """Whether the worker reads this payload (JSON or pickle of `WORKER_FROM` bytes or more)."""
    return codec in WORKER_CODECS and bool(buffers) and memoryview(buffers[0]).nbytes >= WORKER_FROM


@dataclass(frozen=True)
class _Leaf:
    """Stands in the worker for the Arrow leaf *index* (the host decodes the leaves)."""

    index: int


class _LeafPickler(pickle.Pickler):
    def persistent_id(self, obj: Any) -> Any:
        return obj.index if type(obj) is _Leaf else None


class DecodeWorker:
    """One warm worker process, started on first use and again after it was killed; one
    payload at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._send: Connection | None = None
        self._recv: Connection | None = None

    def _start(self) -> tuple[Connection, Connection]:
        if self._process is not None and self._process.poll() is None:
            assert self._send is not None and self._recv is not None
            return self._send, self._recv
        package = str(Path(__file__).resolve().parents[3])
        scratch = tempfile.gettempdir()  # never written: the worker only reads its pipe
        env = kernel_environment(home=scratch, tmp=scratch, memory_limited=True)  # no secrets
        env.update(
            PYTHONPATH=os.pathsep.join(filter(None, [package, os.environ.get("PYTHONPATH")])),
            OPENBLAS_NUM_THREADS="1",
            OMP_NUM_THREADS="1",
        )
        self._process = subprocess.Popen(
            [sys.executable, "-c", f"from {__name__} import main; main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # a warning printed there must not reach the terminal
            env=env,
            close_fds=True,
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._send = Connection(os.dup(self._process.stdin.fileno()), readable=False)
        self._recv = Connection(os.dup(self._process.stdout.fileno()), writable=False)
        self._process.stdin.close()  # the connections own their copies of the pipes
        self._process.stdout.close()
        return self._send, self._recv

    def kill(self) -> None:
        """Kill the worker (the next payload starts another)."""
        process, self._process = self._process, None
        for conn in (self._send, self._recv):
            if conn is not None:
                conn.close()
        self._send = self._recv = None
        if process is not None:
            process.kill()
            process.wait()

    def pid(self) -> int | None:
        """The worker's process id while it runs (tests)."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def run(
        self, codec: str, data: bytes, leaves: int, budget: DecodeBudget
    ) -> tuple[str, list[bytes]]:
        """The worker's reading of *data* within *budget*: the value's shape and its pickled
        parts (`_pickled`; none for JSON); the budget is charged what it built. Killed at
        the budget's deadline."""
        request = json.dumps({"codec": codec, "leaves": leaves, "room": budget.room()})
        with self._lock:
            try:
                send, recv = self._start()
                send.send_bytes(request.encode())
                send.send_bytes(data)
            except OSError:
                self.kill()
                raise TransferError("the decode worker could not be started or reached") from None
            remaining = None if budget.deadline is None else budget.deadline - budget.clock()
            if not recv.poll(max(remaining, 0.0) if remaining is not None else None):
                self.kill()
                raise budget.timed_out()
            try:
                header = json.loads(recv.recv_bytes())
                parts = [recv.recv_bytes() for _ in range(int(header.get("parts") or 0))]
            except (EOFError, OSError, ValueError):
                self.kill()
                error = DecodeLimitExceeded(
                    "the decode worker died while reading it (over its memory limit?)"
                )
                error.detail = "the decode worker died while reading it"
                raise error from None
        if not header.get("ok"):
            kind = _KINDS.get(str(header.get("kind")), TransferError)
            failure = kind(str(header.get("message")))
            failure.detail = str(header.get("detail") or "")
            raise failure
        budget.built("the objects the payload builds", int(header["used"]))
        return str(header.get("shape")), parts


_WORKER = DecodeWorker()
atexit.register(_WORKER.kill)


def decode_worker() -> DecodeWorker:
    """The process's one decode worker."""
    return _WORKER


def decode_isolated(
    codec: str,
    meta: dict[str, Any],
    buffers: list[Any],
    *,
    limit: int,
    budget: DecodeBudget,
    worker: DecodeWorker | None = None,
) -> Any:
    """A JSON or pickle payload (see `uses_worker`) read by the worker first, then built
    here from what it validated; the same errors as `host_decode.decode_in_host`."""
    budget.received(buffers)
    data = bytes(buffers[0])
    if len(data) > limit:
        raise TransferError(f"{len(data):,} bytes from the kernel, over the {limit:,}-byte limit")
    leaves = (
        decode_leaves(meta, buffers, validate=True, budget=budget)
        if codec == "pickle.arrow"
        else []
    )
    shape, parts = (worker or _WORKER).run(codec, data, len(leaves), budget)
    try:
        if codec == "json":
            return json.loads(data, parse_int=json_int())
        if shape == "value" and len(parts) == 1:
            return SafeUnpickler(io.BytesIO(parts[0]), leaves).load()
        items: list[Any] = []
        for part in parts:  # each part's load holds the GIL briefly: the loop runs between
            items.extend(SafeUnpickler(io.BytesIO(part), leaves).load())
        return _SHAPES[shape](items)
    except Exception as exc:  # our own pickler wrote it: only a broken worker gets here
        raise TransferError(f"the decode worker answered malformed data: {exc}") from None


# -- the worker's side ------------------------------------------------------------------------


def _limit_memory(room: int) -> None:
    """Address space: what is mapped now, plus the room to build in and a margin."""
    try:
        with open("/proc/self/statm") as f:
            mapped = int(f.read().split()[0]) * resource.getpagesize()
    except OSError:  # no /proc: what the process holds at its peak so far, about
        mapped = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    cap = mapped + 2 * room + HEADROOM
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _pickled(value: Any) -> tuple[str, list[bytes]]:
    """*value* pickled by the standard pickler (Arrow leaves by persistent id): in one part,
    or a large list, tuple, set, frozenset or dict in parts of `PART` entries each, so that
    the host never holds the GIL for long rebuilding it."""
    shape = type(value).__name__
    if type(value) not in _SHAPES.values() or len(value) <= PART:
        parts = [value]
        shape = "value"
    else:
        entries = list(value.items()) if type(value) is dict else list(value)
        parts = [entries[i : i + PART] for i in range(0, len(entries), PART)]
    out = []
    for part in parts:
        buffer = io.BytesIO()
        _LeafPickler(buffer, protocol=5).dump(part)
        out.append(buffer.getvalue())
    return shape, out


def _read_one(codec: str, data: bytes, leaves: int, room: int) -> tuple[int, str, list[bytes]]:
    from cave_tui.runtime.kernel.bounded_pickle import bounded_loads

    budget = DecodeBudget(limit=room, timeout=None)
    if codec == "json":
        budget.json(data)
        try:
            json.loads(data, parse_int=json_int())
        except (ValueError, RecursionError) as exc:
            raise TransferError(f"malformed JSON from the kernel: {exc}") from None
        return budget.used, "json", []
    try:
        value = bounded_loads(data, [_Leaf(i) for i in range(leaves)], budget)
    except TransferError:
        raise
    except MemoryError:
        raise
    except Exception as exc:
        raise TransferError(f"malformed pickle from the kernel: {exc}") from None
    return (budget.used, *_pickled(value))


def _answer(send: Connection, header: dict[str, Any], parts: list[bytes] | None = None) -> None:
    send.send_bytes(json.dumps({**header, "parts": len(parts or [])}).encode())
    for part in parts or []:
        send.send_bytes(part)


def serve(recv: Connection, send: Connection) -> None:
    """Read payloads until the host closes the pipe; answer each."""
    while True:
        try:
            request = json.loads(recv.recv_bytes())
            data = recv.recv_bytes()
        except EOFError:
            return
        started = time.monotonic()
        try:
            _limit_memory(int(request["room"]))
            used, shape, parts = _read_one(
                str(request["codec"]), data, int(request["leaves"]), int(request["room"])
            )
        except MemoryError:
            del data
            _answer(send, {"ok": False, "kind": "limit", "detail": "over the worker's memory",
                           "message": "decoding it needed more memory than the decode worker "
                           "may take (its limit follows decode_limit)"})  # fmt: skip
            continue
        except TransferError as exc:
            kind = next((k for k, t in _KINDS.items() if type(exc) is t), "malformed")
            _answer(send, {"ok": False, "kind": kind, "message": str(exc), "detail": exc.detail})
            continue
        took = time.monotonic() - started
        _answer(send, {"ok": True, "used": used, "shape": shape, "took": took}, parts)


def main() -> None:
    """The worker process: payloads on stdin, answers on (the original) stdout."""
    out = os.dup(1)
    os.dup2(2, 1)  # nothing printed may reach the host's pipe (stderr is /dev/null)
    serve(Connection(0, writable=False), Connection(out, readable=False))
