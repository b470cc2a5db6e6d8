"""Resources with change notifications: a cell (run, ask) or an inject that changes the
namespace tells `cave://namespace` and `cave://variable/NAME` updated, and the resource
list changed when a name appears or goes; on the 2025 protocol (resources/subscribe,
notifications/resources/*) and on 2026-07-28 (subscriptions/listen)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pandas as pd
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp_types import ResourceListChangedNotification, ResourceUpdatedNotification

from tests.frontends.mcp.conftest import cave_mcp
from tests.frontends.mcp.test_stdio_tools import text_of

WAIT = 30.0  # seconds for a notification on a loaded machine


class Heard:
    """The resource notifications a 2025 client received, in order."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.changed = anyio.Event()

    async def __call__(self, message: IncomingMessage) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            self.items.append(str(message.params.uri))
        elif isinstance(message, ResourceListChangedNotification):
            self.items.append("list_changed")
        else:
            return
        self.changed.set()

    async def until(self, item: str) -> None:
        with anyio.fail_after(WAIT):
            while item not in self.items:
                self.changed = anyio.Event()
                await self.changed.wait()


async def test_subscribed_resources_are_told_changed_on_2025_versions(tmp_path: Path) -> None:
    pd.DataFrame({"x": [1, 2]}).to_parquet(tmp_path / "small.parquet")
    heard = Heard()
    server = cave_mcp(tmp_path, "--in-process")
    async with Client(server, read_timeout_seconds=60, mode="legacy", message_handler=heard) as c:
        declared = c.session.server_capabilities
        assert declared is not None and declared.resources is not None
        assert declared.resources.subscribe and declared.resources.list_changed
        await c.call_tool("run", {"code": "a = 1"})
        listed = await c.list_resources()
        assert [r.uri for r in listed.resources] == ["cave://namespace", "cave://variable/a"]
        await c.subscribe_resource("cave://namespace")
        await c.subscribe_resource("cave://variable/a")

        await c.call_tool("run", {"code": "a = 2"})  # a changed, no name appeared
        await heard.until("cave://variable/a")
        assert heard.items == ["cave://namespace", "cave://variable/a"]

        heard.items.clear()
        result = await c.call_tool("inject", {"path": "small.parquet"})  # a name appears
        assert not result.is_error, text_of(result)
        await heard.until("list_changed")
        assert heard.items == ["cave://namespace", "list_changed"]  # small: not subscribed
        listed = await c.list_resources()
        assert "cave://variable/small" in [r.uri for r in listed.resources]

        heard.items.clear()
        await c.call_tool("run", {"code": "del a"})  # a name goes
        await heard.until("list_changed")
        assert heard.items == ["cave://namespace", "cave://variable/a", "list_changed"]


async def test_listeners_are_told_changes_on_2026_07_28(tmp_path: Path) -> None:
    async with Client(cave_mcp(tmp_path, "--in-process"), read_timeout_seconds=60) as c:
        assert c.protocol_version == "2026-07-28"
        await c.call_tool("run", {"code": "a = 1"})
        await c.list_resources()
        subscription = c.listen(
            resources_list_changed=True, resource_subscriptions=["cave://variable/b"]
        )
        async with subscription as events:
            await c.call_tool("run", {"code": "b = 1"})
            seen: list[object] = []
            with anyio.fail_after(WAIT):
                async for event in events:
                    seen.append(event)
                    if ResourcesListChanged() in seen and len(seen) >= 2:
                        break
        assert ResourceUpdated(uri="cave://variable/b") in seen
        assert ResourceUpdated(uri="cave://variable/a") not in seen  # not listened to
