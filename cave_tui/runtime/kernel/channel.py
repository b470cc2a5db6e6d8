"""The Jupyter wire to one kernel: sockets, signed messages, routing, the `cave` comm.

Built on jupyter_client's `Session` (message format and HMAC signing) and pyzmq's
asyncio sockets. All of it runs on the runtime's own I/O loop (one thread), so a
reply or a kernel's death is noticed even while the caller's loop is busy.
Replies are routed by the id of the request they answer; comm replies by the
request id the host put in the comm message. Message buffers are received
without copying (they can be a 100 MB Arrow stream).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import hmac
import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import zmq
import zmq.asyncio
from jupyter_client.session import Session

COMM_TARGET = "cave"
DELIM = b"<IDS|MSG>"


class ChannelClosed(ConnectionError):
    """The connection to the kernel is gone (it died, or the runtime stopped)."""


class Port(enum.Enum):
    """The kernel channels a request goes on (the Jupyter messaging spec's names)."""

    SHELL = "shell"
    CONTROL = "control"


class MessageRouter:
    """One kernel's messages, whatever carries them: requests sent on a `Port`, replies
    routed to their waiters by the id of the request they answer, comm replies by the
    request id the host put in the comm message. A subclass carries the bytes
    (`_transmit`) and hands each message it receives to `_on_reply` or `_on_iopub`."""

    shell = Port.SHELL
    control = Port.CONTROL
    # the largest message the wire carries to the kernel (None: any); a comm request with
    # more bytes of buffers goes in parts that the kernel joins (`_send_parts`)
    max_message: int | None = None

    def __init__(self, session: Session) -> None:
        self.session = session
        self.replies: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.iopub_handlers: dict[str, Callable[[dict[str, Any]], None]] = {}
        self.comm_waiters: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.comm_id = uuid.uuid4().hex
        self.iopub_seen = asyncio.Event()  # any IOPub message (ipykernel 7 says welcome)
        self.last_seen = time.monotonic()
        self.closed = False

    async def _transmit(self, port: Port, msg: dict[str, Any], buffers: list[Any] | None) -> None:
        """Send one message built by `session.msg`, with its *buffers*, on *port*."""
        raise NotImplementedError

    def _on_reply(self, msg: dict[str, Any]) -> None:
        parent = msg["parent_header"].get("msg_id")
        fut = self.replies.pop(parent, None)
        if fut is not None and not fut.done():
            fut.set_result(msg)

    def _on_iopub(self, msg: dict[str, Any]) -> None:
        self.iopub_seen.set()
        if msg["msg_type"] == "comm_msg":
            data = msg["content"].get("data") or {}
            if data.get("op") == "reply":
                fut = self.comm_waiters.pop(str(data.get("id")), None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
                return
        parent = msg["parent_header"].get("msg_id")
        handler = self.iopub_handlers.get(parent)
        if handler is not None:
            handler(msg)

    # -- sending ---------------------------------------------------------------------------
    async def send(
        self,
        port: Port,
        msg_type: str,
        content: dict[str, Any],
        buffers: list[Any] | None = None,
        *,
        want_reply: bool = True,
        on_iopub: Callable[[dict[str, Any]], None] | None = None,
    ) -> tuple[str, asyncio.Future[dict[str, Any]] | None]:
        if self.closed:
            raise ChannelClosed("the kernel connection is closed")
        msg = self.session.msg(msg_type, content)
        msg_id = msg["header"]["msg_id"]
        fut: asyncio.Future[dict[str, Any]] | None = None
        if want_reply:
            fut = asyncio.get_running_loop().create_future()
            self.replies[msg_id] = fut
        if on_iopub is not None:
            self.iopub_handlers[msg_id] = on_iopub
        try:
            await self._transmit(port, msg, buffers)
        except BaseException:
            self.forget(msg_id)
            raise
        return msg_id, fut

    async def comm_open(self) -> None:
        await self.send(
            self.shell,
            "comm_open",
            {"comm_id": self.comm_id, "target_name": COMM_TARGET, "data": {}},
            want_reply=False,
        )

    async def comm_request(
        self, op: str, data: dict[str, Any] | None = None, buffers: list[Any] | None = None
    ) -> asyncio.Future[dict[str, Any]]:
        """Send one request on the comm; the future resolves with the reply message."""
        req_id = uuid.uuid4().hex
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.comm_waiters[req_id] = fut
        payload = {"op": op, "id": req_id, **(data or {})}
        try:
            if self.max_message is not None and buffers:
                buffers = await self._send_parts(req_id, payload, buffers, self.max_message)
            await self.send(
                self.shell,
                "comm_msg",
                {"comm_id": self.comm_id, "data": payload},
                buffers,
                want_reply=False,
            )
        except BaseException:
            self.comm_waiters.pop(req_id, None)
            raise
        return fut

    async def _send_parts(
        self, req_id: str, payload: dict[str, Any], buffers: list[Any], limit: int
    ) -> list[Any]:
        """When *buffers* hold more than *limit* bytes: send them first in parts of at most
        *limit* (op `part`), and mark *payload* so the kernel joins them back into its
        buffers (`assemble`: how many parts each buffer took); returns the buffers left to
        send with *payload* (none then)."""
        views = [memoryview(b).cast("B") for b in buffers]
        if sum(v.nbytes for v in views) <= limit:
            return buffers
        counts = []
        for view in views:
            pieces = [view[at : at + limit] for at in range(0, view.nbytes, limit)] or [view]
            counts.append(len(pieces))
            for piece in pieces:
                part = {"op": "part", "id": uuid.uuid4().hex, "key": req_id}
                await self.send(
                    self.shell,
                    "comm_msg",
                    {"comm_id": self.comm_id, "data": part},
                    [piece],
                    want_reply=False,
                )
        payload["assemble"] = counts
        return []

    def forget(self, msg_id: str) -> None:
        self.replies.pop(msg_id, None)
        self.iopub_handlers.pop(msg_id, None)

    # -- teardown --------------------------------------------------------------------------
    def fail_all(self, exc: BaseException) -> None:
        """Wake everyone waiting on this kernel with *exc* (it died or was stopped)."""
        for fut in [*self.replies.values(), *self.comm_waiters.values()]:
            if not fut.done():
                fut.set_exception(exc)
                fut.exception()  # mark retrieved: nobody may be waiting any more
        self.replies.clear()
        self.comm_waiters.clear()

    def close(self) -> None:
        """Stop carrying messages; everyone waiting gets ChannelClosed."""
        self.closed = True
        self.fail_all(ChannelClosed("the kernel connection was closed"))


class KernelChannel(MessageRouter):
    """The shell, control and IOPub sockets of one kernel, with replies routed to waiters."""

    def __init__(self, info: dict[str, Any], context: zmq.asyncio.Context) -> None:
        super().__init__(
            Session(
                key=_as_bytes(info.get("key", b"")),
                signature_scheme=info.get("signature_scheme", "hmac-sha256"),
                username="cave",
            )
        )
        self.info = info
        self.context = context
        ident = uuid.uuid4().hex.encode()
        self.sockets = {
            Port.SHELL: self._socket(zmq.DEALER, "shell_port", ident),
            Port.CONTROL: self._socket(zmq.DEALER, "control_port", ident),
        }
        self.iopub = self._socket(zmq.SUB, "iopub_port")
        self.iopub.setsockopt(zmq.SUBSCRIBE, b"")
        self._tasks = [
            asyncio.ensure_future(self._read(self.sockets[Port.SHELL], self._on_reply)),
            asyncio.ensure_future(self._read(self.sockets[Port.CONTROL], self._on_reply)),
            asyncio.ensure_future(self._read(self.iopub, self._on_iopub)),
        ]

    def _url(self, port_key: str) -> str:
        transport = self.info.get("transport", "tcp")
        ip = self.info.get("ip", "127.0.0.1")
        port = self.info[port_key]
        if transport == "ipc":
            return f"ipc://{ip}-{port}"
        return f"{transport}://{ip}:{port}"

    def _socket(self, kind: int, port_key: str, ident: bytes | None = None) -> zmq.asyncio.Socket:
        sock = self.context.socket(kind)
        sock.linger = 0
        if ident is not None:
            sock.setsockopt(zmq.IDENTITY, ident)
        sock.connect(self._url(port_key))
        return sock

    # -- receiving -------------------------------------------------------------------------
    async def _read(
        self, sock: zmq.asyncio.Socket, handle: Callable[[dict[str, Any]], None]
    ) -> None:
        while True:
            try:
                frames = await sock.recv_multipart(copy=False)
            except (asyncio.CancelledError, zmq.ZMQError):
                return
            try:
                msg = self._unpack(frames)
            except Exception:
                continue  # unsigned or malformed: not from our kernel
            self.last_seen = time.monotonic()
            try:
                handle(msg)
            except Exception:  # a routing bug must not stop the reader
                import logging

                logging.getLogger(__name__).exception("kernel message handler failed")

    def _unpack(self, frames: list[Any]) -> dict[str, Any]:
        """Check the signature and parse a message (buffers stay zero-copy).

        Leaner than `Session.deserialize`, which also parses every date: a sixth
        of the host's cost per message on a `1+1` round trip."""
        i = next(
            (n for n, f in enumerate(frames) if len(f) == len(DELIM) and f.bytes == DELIM), None
        )
        if i is None:
            raise ValueError("no delimiter")
        parts = [frame.bytes for frame in frames[i + 1 : i + 6]]
        if len(parts) < 5:
            raise ValueError("short message")
        auth = self.session.auth
        if auth is not None:
            mac = auth.copy()
            for part in parts[1:5]:
                mac.update(part)
            if not hmac.compare_digest(parts[0], mac.hexdigest().encode()):
                raise ValueError("bad signature")
        header = json.loads(parts[1])
        return {
            "header": header,
            "msg_id": header.get("msg_id"),
            "msg_type": header.get("msg_type"),
            "parent_header": json.loads(parts[2]),
            "metadata": json.loads(parts[3]) if len(parts[3]) > 2 else {},
            "content": json.loads(parts[4]),
            "buffers": [memoryview(frame) for frame in frames[i + 6 :]],
        }

    async def _transmit(self, port: Port, msg: dict[str, Any], buffers: list[Any] | None) -> None:
        frames = self.session.serialize(msg)
        await self.sockets[port].send_multipart([*frames, *(buffers or [])], copy=False)

    def close(self) -> None:
        if self.closed:
            return
        for task in self._tasks:
            task.cancel()
        for sock in (*self.sockets.values(), self.iopub):
            with contextlib.suppress(Exception):
                sock.close(linger=0)
        super().close()


def _as_bytes(key: Any) -> bytes:
    return key.encode() if isinstance(key, str) else bytes(key)


async def heartbeat_ok(context: zmq.asyncio.Context, info: dict[str, Any], timeout: float) -> bool:
    """One ping on the kernel's heartbeat socket (echoed by a C thread, even mid-cell)."""
    sock = context.socket(zmq.REQ)
    sock.linger = 0
    transport = info.get("transport", "tcp")
    ip = info.get("ip", "127.0.0.1")
    port = info["hb_port"]
    sock.connect(f"ipc://{ip}-{port}" if transport == "ipc" else f"{transport}://{ip}:{port}")
    try:
        await sock.send(b"ping")
        return await asyncio.wait_for(sock.recv(), timeout) == b"ping"
    except (TimeoutError, zmq.ZMQError):
        return False
    finally:
        sock.close(linger=0)
