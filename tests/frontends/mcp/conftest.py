"""`cave mcp` spawned for real, as an MCP client spawns it (stdio)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.client.stdio import StdioServerParameters

from tests.helpers.paths import REPO_ROOT


def cave_mcp_command(*flags: str) -> list[str]:
    """The command line of `cave mcp FLAGS` from this checkout."""
    return [sys.executable, "-m", "cave_tui", "mcp", *flags]


def cave_mcp_env() -> dict[str, str]:
    """This test's environment (its isolated folders), with this checkout importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def cave_mcp(folder: Path, *flags: str) -> StdioServerParameters:
    """`cave mcp FLAGS` working in *folder*, its sessions recorded in folder/sessions."""
    command, *args = cave_mcp_command(*flags, "--sessions-dir", str(folder / "sessions"))
    return StdioServerParameters(command=command, args=args, env=cave_mcp_env(), cwd=folder)
