"""`cave mcp` with the Jupyter kernel runtime (SDK client), and driven by a third-party
client: the MCP Inspector's command-line client (npm `@modelcontextprotocol/inspector-cli`,
installed by .ci/run into .ci/inspector)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from mcp import Client

from tests.frontends.mcp.conftest import cave_mcp, cave_mcp_command, cave_mcp_env
from tests.frontends.mcp.test_stdio_tools import text_of
from tests.helpers.paths import REPO_ROOT

INSPECTOR_DIR = REPO_ROOT / ".ci" / "inspector"
INSPECTOR = INSPECTOR_DIR / "node_modules" / ".bin" / "mcp-inspector-cli"


async def test_kernel_runtime_over_stdio(tmp_path: Path) -> None:
    pd.DataFrame({"x": [1, 2, 3]}).to_parquet(tmp_path / "small.parquet")
    async with Client(cave_mcp(tmp_path, "--kernel"), read_timeout_seconds=60) as client:
        result = await client.call_tool("run", {"code": "print(sum(range(4)))"})
        assert not result.is_error and text_of(result) == "Output:\n6"
        result = await client.call_tool("inject", {"path": "small.parquet"})
        assert not result.is_error, text_of(result)
        result = await client.call_tool("run", {"code": "print(small.x.sum())"})
        assert text_of(result) == "Output:\n6"
        result = await client.call_tool("describe", {"name": "small"})
        assert "**small**: DataFrame" in text_of(result)
        result = await client.call_tool("run", {"code": "raise KeyError('nope')"})
        assert result.is_error and "KeyError: 'nope'" in text_of(result)


def require_inspector() -> None:
    """The Inspector CLI must be installed: a missing one fails the test when
    CAVE_REQUIRE_INSPECTOR=1 (CI, which installs it) and skips it otherwise."""
    if INSPECTOR.exists():
        return
    reason = f"the MCP Inspector CLI is not installed: `npm ci --prefix {INSPECTOR_DIR}`"
    if os.environ.get("CAVE_REQUIRE_INSPECTOR") == "1":
        pytest.fail(f"CAVE_REQUIRE_INSPECTOR=1 but {reason}")
    pytest.skip(reason)


def _inspector(folder: Path, *args: str) -> dict[str, object]:
    """The Inspector CLI's JSON answer for `cave mcp` working in *folder*."""
    server = cave_mcp_command(
        "--in-process", "--workdir", str(folder), "--sessions-dir", str(folder / "sessions")
    )
    return inspector_cli(*server, *args)


def inspector_cli(*args: str) -> dict[str, object]:
    """The Inspector CLI's JSON answer for `--cli ARGS` (a server command or URL, then the
    method and its flags)."""
    require_inspector()
    done = subprocess.run(
        [str(INSPECTOR), "--cli", *args],
        # inspector-cli 1.0.3 finds its own package.json only from a folder whose parent
        # holds a package.json (it tests the path from the working folder): this one.
        cwd=INSPECTOR_DIR / "node_modules",
        env=cave_mcp_env(),
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    answer: dict[str, object] = json.loads(done.stdout[done.stdout.index("{") :])
    return answer


def test_inspector_cli_lists_tools_and_runs_a_cell(tmp_path: Path) -> None:
    listed = _inspector(tmp_path, "--method", "tools/list")
    tools = listed["tools"]
    assert isinstance(tools, list)
    assert {tool["name"] for tool in tools} == {
        "run",
        "ask",
        "list_variables",
        "describe",
        "inject",
        "retrieve",
    }
    ran = _inspector(
        tmp_path, "--method", "tools/call", "--tool-name", "run", "--tool-arg", "code=print(6*7)"
    )
    assert ran["isError"] is False
    assert ran["content"] == [{"type": "text", "text": "Output:\n42"}]
