"""Namespace changes told to MCP clients as resource notifications.

Whatever changes the namespace (a cell of `run` or `ask`, `inject`, a restart) reaches
`ResourceChanges.on_change` through the app's namespace hooks (any thread). Soon after,
`cave://namespace` and each changed `cave://variable/NAME` are told updated, and the
resource list changed when a name appeared or went: on 2026-07-28 through the SDK's
subscription bus (`subscriptions/listen` streams filter them), on the 2025 versions as
`notifications/resources/updated` for the URIs the client subscribed to
(`resources/subscribe`) and `notifications/resources/list_changed`.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged, ResourceUpdated
from mcp_types import (
    EmptyResult,
    ListResourcesResult,
    PaginatedRequestParams,
    Resource,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

    from cave_tui.app.services import AppServices
    from cave_tui.runtime.base import NamespaceChange

NAMESPACE_URI = "cave://namespace"
LISTED = 1_000  # variables listed by `resources/list` at most (the summary's first)


def variable_uri(name: str) -> str:
    return "cave://variable/" + quote(name, safe="")


@dataclass
class ResourceChanges:
    """The namespace's resources and their change notifications, for one server."""

    services: AppServices
    bus: InMemorySubscriptionBus = field(default_factory=InMemorySubscriptionBus)
    subscribed: set[str] = field(default_factory=set)  # URIs (2025 `resources/subscribe`)
    session: ServerSession | None = None  # the 2025 session to notify
    known: set[str] | None = None  # the names last seen (None: not read yet)
    _changed: set[str] = field(default_factory=set)
    _deleted: set[str] = field(default_factory=set)
    _everything: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _loop: asyncio.AbstractEventLoop | None = None
    _flushing: asyncio.Task[None] | None = None

    def install(self, server: Server[Any]) -> None:
        """Serve `resources/list` (the namespace and one per variable) and the 2025
        `resources/subscribe`/`unsubscribe`, and hear the namespace's changes."""
        server.add_request_handler("resources/list", PaginatedRequestParams, self._list)
        server.add_request_handler("resources/subscribe", SubscribeRequestParams, self._subscribe)
        server.add_request_handler(
            "resources/unsubscribe", UnsubscribeRequestParams, self._unsubscribe
        )
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:  # built outside the loop: the first request names it
            self._loop = None
        self.services.namespace_hooks.append(self.on_change)

    def _seen(self, session: ServerSession) -> None:
        """A request came in *session* (on the loop): the one to notify."""
        self.session = session
        if self._loop is None:
            self._loop = asyncio.get_running_loop()

    async def _names(self) -> list[str]:
        rows = await self.services.live_runtime.namespace_summary()
        return [row.name for row in rows]

    async def _list(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams
    ) -> ListResourcesResult:
        self._seen(ctx.session)
        names = await self._names()
        self.known = set(names)
        resources = [Resource(uri=NAMESPACE_URI, name="namespace", mime_type="text/plain")]
        resources += [
            Resource(uri=variable_uri(name), name=name, mime_type="text/plain")
            for name in names[:LISTED]
        ]
        return ListResourcesResult(resources=resources)

    async def _subscribe(
        self, ctx: ServerRequestContext[Any], params: SubscribeRequestParams
    ) -> EmptyResult:
        self._seen(ctx.session)
        self.subscribed.add(str(params.uri))
        return EmptyResult()

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Any], params: UnsubscribeRequestParams
    ) -> EmptyResult:
        self.subscribed.discard(str(params.uri))
        return EmptyResult()

    def on_change(self, change: NamespaceChange) -> None:
        """A namespace hook (any thread): note *change*, tell the clients soon."""
        with self._lock:
            self._changed.update(change.changed)
            self._deleted.update(change.deleted)
            self._everything |= change.everything
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._schedule)

    def _schedule(self) -> None:
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.ensure_future(self.flush())

    async def flush(self) -> None:
        """Tell the clients what changed since the last flush."""
        await asyncio.sleep(0)  # the changes of one cell come together
        with self._lock:
            changed, deleted, everything = self._changed, self._deleted, self._everything
            self._changed, self._deleted, self._everything = set(), set(), False
        if not (changed or deleted or everything):
            return
        before = self.known
        if everything or before is None:
            try:
                now = set(await self._names())
            except Exception:  # the runtime is going: nothing to tell
                return
        else:
            now = (before | changed) - deleted
        self.known = now
        touched = (before or set()) | now if everything else changed | deleted
        uris = [NAMESPACE_URI, *(variable_uri(name) for name in sorted(touched))]
        listed = before is not None and now != before
        for uri in uris:
            await self.bus.publish(ResourceUpdated(uri=uri))
        if listed:
            await self.bus.publish(ResourcesListChanged())
        await self._tell_session(uris, listed)

    async def _tell_session(self, uris: list[str], listed: bool) -> None:
        """The 2025 notifications, to the session that subscribed or listed."""
        session = self.session
        if session is None:
            return
        try:
            for uri in uris:
                if uri in self.subscribed:
                    await session.send_resource_updated(uri)
            if listed:
                await session.send_resource_list_changed()
        except Exception:  # the client has gone
            self.session = None
