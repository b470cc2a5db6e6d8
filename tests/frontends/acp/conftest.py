"""`cave acp` spawned for real, as an ACP front end spawns it, driven by the SDK's client."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from tests.helpers.paths import REPO_ROOT


def scripted(folder: Path, replies: list[str]) -> str:
    """`scripted:FILE` for *replies*, written to folder/replies.yaml."""
    path = folder / "replies.yaml"
    path.write_text(yaml.safe_dump(replies), encoding="utf-8")
    return f"scripted:{path}"


@dataclass
class RecordingClient:
    """An ACP client that keeps every session update and answers permission requests with
    *allow* (True: the allow option; False: the reject option)."""

    allow: bool = False
    updates: list[Any] = field(default_factory=list)
    asked: list[ToolCallUpdate] = field(default_factory=list)
    seen: asyncio.Event = field(default_factory=asyncio.Event)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self.seen.set()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:  # fmt: skip
        self.asked.append(tool_call)
        kind = "allow_once" if self.allow else "reject_once"
        chosen = next((o for o in options if o.kind == kind), None)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        outcome = AllowedOutcome(outcome="selected", option_id=chosen.option_id)
        return RequestPermissionResponse(outcome=outcome)

    # -- what was seen --------------------------------------------------------------------
    def text(self, since: int = 0) -> str:
        """The agent's message text streamed so far (from update number *since*)."""
        return "".join(
            u.content.text
            for u in self.updates[since:]
            if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContentBlock)
        )

    def of(self, kind: type) -> list[Any]:
        return [u for u in self.updates if isinstance(u, kind)]

    def calls(self) -> list[ToolCallStart]:
        return self.of(ToolCallStart)

    def outcomes(self) -> list[ToolCallProgress]:
        return [u for u in self.of(ToolCallProgress) if u.status in ("completed", "failed")]

    async def wait_for(self, test: Any, timeout: float = 30) -> None:
        """Until *test()* holds (after some update), or fail after *timeout* seconds."""
        async with asyncio.timeout(timeout):
            while not test():
                self.seen.clear()
                await self.seen.wait()


def content_text(update: ToolCallStart | ToolCallProgress) -> str:
    """The text of a tool call's content blocks."""
    return "\n".join(c.content.text for c in update.content or [] if c.type == "content")


def cave_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


@asynccontextmanager
async def cave_acp(
    folder: Path, client: RecordingClient, *flags: str
) -> AsyncIterator[ClientSideConnection]:
    """`cave acp --in-process FLAGS` working in *folder* (sessions in folder/sessions),
    initialized."""
    args = ["-m", "cave_tui", "acp", "--in-process", "--sessions-dir", str(folder / "sessions")]
    async with spawn_agent_process(
        client, sys.executable, *args, *flags, env=cave_env(), cwd=folder
    ) as (conn, _process):
        async with asyncio.timeout(60):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
        yield conn
