"""A kernel that a Jupyter Kernel Gateway or Enterprise Gateway starts, reached over its REST
and websocket API: the same runtime (injection, retrieval, interrupts, time limits, restarts
with the checkpoint restored) with the kernel somewhere else.

The websocket speaks the Jupyter kernel protocol v1 with jupyter_server's own codec
(`serialize_msg_to_ws_v1`), over tornado's websocket client: jupyter_server's
`GatewayKernelClient` sends JSON text only and would drop the message buffers (the Arrow bytes
of every frame sent or retrieved). The four REST calls (start, interrupt, look up, delete a
kernel: the endpoints `GatewayKernelManager` calls) go through httpx: that manager's import
builds jupyter_events' schema validators (3 s of CPU) and configures one gateway per process.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from cave_tui.runtime.base import NamespaceChange
from cave_tui.runtime.kernel import limits
from cave_tui.runtime.kernel.cell import CellOutcome
from cave_tui.runtime.kernel.channel import ChannelClosed, MessageRouter, Port
from cave_tui.runtime.kernel.errors import KernelLaunchError
from cave_tui.runtime.kernel.kinds import KernelHost, KernelKind
from cave_tui.runtime.kernel.process import KernelExit

if TYPE_CHECKING:
    import httpx
    import zmq.asyncio
    from jupyter_client.session import Session
    from tornado.websocket import WebSocketClientConnection

WS_PROTOCOL = "v1.kernel.websocket.jupyter.org"
CONNECT_TIMEOUT = 4.0  # seconds to reach the gateway: an unreachable one fails within this
LIVENESS_TIMEOUT = 4.0  # seconds a "does the kernel still exist" question may take
POLL_EVERY = 2.0  # seconds between two "does the kernel still exist" questions
MAX_MESSAGE = 2**31 - 1  # a retrieved frame is one message: no limit below the decode limit
# a gateway's tornado closes a websocket sent a message over 10 MiB (its default, which
# Kernel Gateway does not let one change): larger requests go in parts of this size
PART_BYTES = 8 * 2**20


@dataclass(frozen=True)
class GatewaySpec:
    """Where the gateway is and how to ask it for a kernel."""

    url: str  # http(s)://host:port of a Jupyter Kernel Gateway or Enterprise Gateway
    token: str | None = None  # its auth token (KG_AUTH_TOKEN / EG_AUTH_TOKEN), if it has one
    kernel_name: str = "python3"  # the kernelspec the gateway starts

    @property
    def base(self) -> str:
        return self.url.rstrip("/")

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"} if self.token else {}


class GatewayError(KernelLaunchError):
    """The gateway could not be reached, refused the token or the request (the message says
    which, and what to check)."""


def gateway_error(exc: BaseException, spec: GatewaySpec, doing: str) -> GatewayError:
    """A clear error for a failed REST call or websocket connection to the gateway."""
    import httpx

    code = exc.response.status_code if isinstance(exc, httpx.HTTPStatusError) else None
    where = f"the Jupyter gateway at {spec.url}"
    if code in (401, 403):
        hint = "the token was refused" if spec.token else "it needs a token (--gateway-token)"
        return GatewayError(f"{where} refused {doing} (HTTP {code}): {hint}")
    if code in (502, 503, 504) or isinstance(exc, OSError | TimeoutError | httpx.TransportError):
        return GatewayError(
            f"{where} did not answer {doing} (is it running, and is the URL right?): {exc}"
        )
    if code == 404:
        return GatewayError(f"{where} has no such kernel or kernelspec ({doing}): {exc}")
    return GatewayError(f"{where} failed {doing}: {exc}")


class GatewayChannel(MessageRouter):
    """The kernel's channels as one websocket (protocol v1: binary frames that carry the
    message buffers as they are). `replace` swaps the websocket under the same routing:
    the gateway replays what the kernel sent meanwhile to the same session id."""

    def __init__(
        self,
        session: Session,
        ws: WebSocketClientConnection,
        on_lost: Callable[[GatewayChannel, WebSocketClientConnection], None],
    ) -> None:
        super().__init__(session)
        self.ws = ws
        self.on_lost = on_lost  # called (on the loop) when the websocket closes under us
        self.gone: str | None = None  # how the gateway said the kernel ended
        self.max_message = PART_BYTES
        self._reader = asyncio.ensure_future(self._read())

    def replace(self, ws: WebSocketClientConnection) -> None:
        self.ws = ws
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        from jupyter_server.services.kernels.connection.base import deserialize_msg_from_ws_v1

        ws = self.ws
        ack = _QuickAck(ws)
        while True:
            ack.arm()
            try:
                raw = await ws.read_message()
            except asyncio.CancelledError:
                return
            if raw is None:
                break
            if isinstance(raw, str):
                continue  # protocol v1 is binary only
            try:
                channel, parts = deserialize_msg_from_ws_v1(raw)
                msg = self._unpack(parts)
            except Exception:
                continue  # malformed: not a kernel message
            self.last_seen = time.monotonic()
            if channel == "iopub":
                self.gone = _ended(msg)
                if self.gone is not None:
                    break  # the kernel that held the runtime's state is gone
                self._on_iopub(msg)
            elif channel in ("shell", "control"):
                self._on_reply(msg)
        if not self.closed:
            self.on_lost(self, ws)

    def _unpack(self, parts: list[bytes]) -> dict[str, Any]:
        unpack = self.session.unpack
        header = unpack(parts[0])
        return {
            "header": header,
            "msg_id": header.get("msg_id"),
            "msg_type": header.get("msg_type"),
            "parent_header": unpack(parts[1]),
            "metadata": unpack(parts[2]),
            "content": unpack(parts[3]),
            "buffers": [memoryview(part) for part in parts[4:]],
        }

    async def _transmit(self, port: Port, msg: dict[str, Any], buffers: list[Any] | None) -> None:
        from jupyter_server.services.kernels.connection.base import serialize_msg_to_ws_v1

        pack = self.session.pack
        parts = [
            pack(msg["header"]),
            pack(msg["parent_header"]),
            pack(msg["metadata"]),
            pack(msg["content"]),
            *(memoryview(b).cast("B") for b in buffers or []),
        ]
        from tornado.websocket import WebSocketClosedError

        try:
            await self.ws.write_message(serialize_msg_to_ws_v1(parts, port.value), binary=True)
        except WebSocketClosedError:
            raise ChannelClosed("the websocket to the gateway's kernel is closed") from None

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._reader.cancel()
        with contextlib.suppress(Exception):
            self.ws.close()
        super().close()


class _QuickAck:
    """Acknowledge what the gateway sends at once (Linux's TCP_QUICKACK, re-armed before
    each read: the kernel leaves quick-ack mode on its own). A gateway writes a cell's
    messages as small frames with Nagle's algorithm on: each one after the first waits for
    the ACK of the one before, which a delayed ACK holds 40 ms, on every round trip."""

    def __init__(self, ws: WebSocketClientConnection) -> None:
        import socket

        self._option = getattr(socket, "TCP_QUICKACK", None)
        stream = getattr(ws, "stream", None)
        self._socket = getattr(stream, "socket", None) if self._option is not None else None

    def arm(self) -> None:
        if self._socket is None:
            return
        import socket

        try:
            self._socket.setsockopt(socket.IPPROTO_TCP, self._option, 1)
        except OSError:  # closed, or not TCP (a unix socket): nothing to speed up
            self._socket = None


def _ended(msg: dict[str, Any]) -> str | None:
    """How the kernel ended, when IOPub message *msg* says it did (None: it did not)."""
    content = msg["content"]
    if msg["msg_type"] == "shutdown_reply" and not content.get("restart"):
        return "was shut down at the gateway (culled, or deleted through its API)"
    if msg["msg_type"] == "status" and content.get("execution_state") == "restarting":
        return "died and the gateway restarted it empty"
    if msg["msg_type"] == "status" and content.get("execution_state") == "dead":
        return "died at the gateway"
    return None


class GatewayKernel(KernelKind):
    """A kernel the gateway starts for cave: cave's to interrupt, kill (delete) and restart
    through the gateway's REST API; watched through its websocket; never limited or
    sandboxed by cave (the gateway's machine decides that)."""

    owned = True
    lost_outcome: ClassVar[CellOutcome] = CellOutcome.DIED
    keeps_checkpoint: ClassVar[bool] = True

    def __init__(self, spec: GatewaySpec, startup_timeout: float = 60.0) -> None:
        self.spec = spec
        self.startup_timeout = startup_timeout
        self.kernel_id: str | None = None
        self.session_id: str | None = None
        self.channel: GatewayChannel | None = None
        self._died: asyncio.Future[KernelExit] | None = None
        self._deleting: asyncio.Future[None] | None = None
        self._sup: KernelHost | None = None
        self._watcher: asyncio.Future[None] | None = None
        self._loss: asyncio.Future[None] | None = None  # finding out why the websocket closed

    def auto_memory_limit(self) -> int | None:
        return None  # the gateway's machine sets its kernels' limits

    def resolve_user(
        self, run_as: str | int | None, *, private_folder: bool = True
    ) -> limits.KernelUser | None:
        return None  # it runs as whoever the gateway runs kernels as

    @property
    def has_live_process(self) -> bool:
        return self.kernel_id is not None and self._died is not None and not self._died.done()

    # -- REST (the Jupyter Server kernels API) -----------------------------------------------
    async def _rest(
        self, method: str, path: str, doing: str, *, timeout: float = LIVENESS_TIMEOUT
    ) -> httpx.Response:
        """One call to the gateway's REST API; a GatewayError saying what failed."""
        import httpx

        body = {"name": self.spec.kernel_name} if method == "POST" and not path else None
        try:
            async with httpx.AsyncClient(
                timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT), trust_env=False
            ) as client:
                response = await client.request(
                    method,
                    f"{self.spec.base}/api/kernels{path}",
                    headers=self.spec.headers,
                    json=body if method == "POST" else None,
                )
                if response.status_code != 404 or method != "GET":
                    response.raise_for_status()
                return response
        except Exception as exc:
            raise gateway_error(exc, self.spec, doing) from None

    async def start(self, sup: KernelHost) -> dict[str, Any]:
        from jupyter_client.session import Session

        self._sup = sup
        reply = await self._rest("POST", "", "to start a kernel", timeout=self.startup_timeout)
        self.kernel_id = str(reply.json()["id"])
        self._died = asyncio.get_running_loop().create_future()
        self._deleting = None
        self.session_id = uuid.uuid4().hex
        ws = await self._connect()
        self.channel = GatewayChannel(
            # the gateway signs what it passes on to the kernel; this key signs nothing
            Session(key=os.urandom(16), username="cave", session=self.session_id),
            ws,
            self._lost,
        )
        return {"kernel_id": self.kernel_id, "gateway": self.spec.url}

    def open_channel(self, info: dict[str, Any], ctx: zmq.asyncio.Context) -> MessageRouter:
        assert self.channel is not None
        return self.channel

    async def _connect(self) -> WebSocketClientConnection:
        try:
            import jupyter_server.services.kernels.connection.base  # noqa: F401 (the codec)
            from tornado.httpclient import HTTPRequest
            from tornado.websocket import websocket_connect
        except ImportError as exc:
            raise GatewayError(
                f"a gateway's kernel needs jupyter_server ({exc}): pip install 'cave-tui[gateway]'"
            ) from None
        ws_base = "ws" + self.spec.base.removeprefix("http")  # http -> ws, https -> wss
        request = HTTPRequest(
            f"{ws_base}/api/kernels/{self.kernel_id}/channels?session_id={self.session_id}",
            headers=self.spec.headers,
            connect_timeout=CONNECT_TIMEOUT,
            request_timeout=CONNECT_TIMEOUT,
        )
        try:
            ws = await asyncio.wait_for(
                websocket_connect(
                    request, subprotocols=[WS_PROTOCOL], max_message_size=MAX_MESSAGE
                ),
                CONNECT_TIMEOUT * 2,
            )
        except Exception as exc:
            raise gateway_error(exc, self.spec, "the kernel's websocket") from None
        # Small messages go out at once: with Nagle's algorithm on, a request written
        # while the last reply's ACK is delayed waits up to 40 ms (Linux), every round trip.
        with contextlib.suppress(AttributeError, OSError):
            ws.protocol.set_nodelay(True)  # type: ignore[union-attr]
        return ws

    async def _exists(self) -> bool | None:
        """Whether the gateway still has the kernel (None: the gateway did not answer)."""
        if self.kernel_id is None:
            return False
        try:
            reply = await self._rest("GET", f"/{self.kernel_id}", "to look the kernel up")
        except GatewayError:
            return None
        return reply.status_code != 404

    # -- death -------------------------------------------------------------------------------
    def _lost(self, chan: GatewayChannel, ws: WebSocketClientConnection) -> None:
        """The websocket closed, or the gateway said the kernel restarted: reconnect if the
        kernel is still the one set up, else it is dead."""
        if chan is self.channel and self._died is not None and not self._died.done():
            self._loss = asyncio.ensure_future(self._after_loss(chan))

    async def _after_loss(self, chan: GatewayChannel) -> None:
        if self._deleting is not None:
            return  # cave is deleting it: that marks it dead
        if chan.gone is None:
            for _ in range(3):  # a dropped websocket: the kernel is still there, reconnect
                if await self._exists() is False:
                    break
                try:
                    ws = await self._connect()
                except GatewayError:
                    await asyncio.sleep(0.5)
                    continue
                if chan is self.channel and not chan.closed:
                    chan.replace(ws)
                else:
                    ws.close()
                return
        why = chan.gone or "is gone: the gateway lost it or stopped answering"
        self._mark_dead(KernelExit(exitcode=None, reason=why))

    def watch(self, sup: KernelHost) -> None:
        died = self._died
        if died is not None and (self._watcher is None or self._watcher.done()):
            self._watcher = asyncio.ensure_future(self._poll(died))

    async def _poll(self, died: asyncio.Future[KernelExit]) -> None:
        """Ask the gateway every `POLL_EVERY` s whether the kernel still exists: a kernel
        killed without a word on its websocket (culled mid-cell) is noticed within that."""
        while not died.done():
            await asyncio.sleep(POLL_EVERY)
            if not died.done() and self._deleting is None and await self._exists() is False:
                self._mark_dead(KernelExit(exitcode=None, reason="is gone from the gateway"))

    def _mark_dead(self, info: KernelExit) -> None:
        if self._died is not None and not self._died.done():
            self._died.set_result(info)
            if self._sup is not None:
                self._sup.on_exit(info)

    def died(self) -> asyncio.Future[KernelExit]:
        if self._died is not None:
            return self._died
        return asyncio.get_running_loop().create_future()

    # -- control -----------------------------------------------------------------------------
    async def interrupt(self, chan: MessageRouter | None) -> None:
        if self.has_live_process:
            with contextlib.suppress(GatewayError):
                await self._rest("POST", f"/{self.kernel_id}/interrupt", "to interrupt it")

    def kill(self) -> bool:
        if self._deleting is None:
            self._deleting = asyncio.ensure_future(self._delete(requested=True))
        return True

    async def _delete(self, *, requested: bool) -> None:
        if self.kernel_id is not None:
            with contextlib.suppress(GatewayError):
                await self._rest("DELETE", f"/{self.kernel_id}", "to shut the kernel down")
        self._mark_dead(KernelExit(exitcode=None, requested=requested, reason="was killed"))

    async def restart(self, sup: KernelHost, reason: str) -> str:
        started = time.monotonic()
        sup.close_channel()
        sup.on_change(NamespaceChange(everything=True))  # the namespace is rebuilt
        await (self._deleting or self._delete(requested=True))
        self.channel = None
        sup.forget_pending()
        return await sup.reboot(reason, started)

    async def revive(self, sup: KernelHost) -> None:
        if not self.has_live_process or sup.chan is None:
            died = self._died
            info = died.result() if died is not None and died.done() else None
            reason = info.describe() if info else "was not running"
            sup.notices.append(await self.restart(sup, reason))

    async def abort(self) -> None:
        await self.stop()

    async def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        if self.kernel_id is not None:
            await (self._deleting or self._delete(requested=True))
        self.kernel_id = None

    def abandon(self) -> None:
        """At interpreter exit: ask the gateway to delete the kernel (best effort, 2 s)."""
        if self.kernel_id is None:
            return
        url = f"{self.spec.base}/api/kernels/{self.kernel_id}"
        request = urllib.request.Request(url, method="DELETE", headers=self.spec.headers)
        with contextlib.suppress(Exception):
            urllib.request.urlopen(request, timeout=2).close()
        self.kernel_id = None
