"""`cave mcp` driven by the SDK's own stdio client: every tool and resource, a real parquet
injected and retrieved, a cell the guard refuses, a traceback, a missing variable."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from mcp import Client
from mcp_types import (
    CallToolResult,
    ResourceTemplateReference,
    TextContent,
    TextResourceContents,
)

from tests.frontends.mcp.conftest import cave_mcp

TOOLS = {"run", "ask", "list_variables", "describe", "inject", "retrieve"}


def text_of(result: CallToolResult) -> str:
    """The one text block of a tool's reply."""
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


async def test_tools_and_resources_over_stdio(tmp_path: Path) -> None:
    frame = pd.DataFrame({"carrier": ["AA", "UA", "DL"], "delay": [3.5, -1.0, 12.25]})
    frame.to_parquet(tmp_path / "flights.parquet")
    (tmp_path / "out").mkdir()
    async with Client(cave_mcp(tmp_path, "--in-process"), read_timeout_seconds=60) as client:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        run = next(tool for tool in listed.tools if tool.name == "run")
        assert run.input_schema["required"] == ["code"]

        result = await client.call_tool("run", {"code": "1+1"})
        assert not result.is_error and text_of(result) == "Output:\n2"

        result = await client.call_tool("run", {"code": "print('hello')\ntotal = 40 + 2"})
        assert not result.is_error
        assert text_of(result) == "Output:\nhello\n[changed: total]"

        # Output past the limit keeps its head and its tail, as the agent reads it.
        result = await client.call_tool("run", {"code": "for i in range(5000): print(i)"})
        text = text_of(result)
        assert text.startswith("Output:\n0\n1\n") and text.endswith("4998\n4999\n[changed: i]")
        assert "characters elided" in text

        result = await client.call_tool("run", {"code": "def f():\n    return 1/0\nf()"})
        assert result.is_error
        text = text_of(result)
        assert "cell line 3: f()" in text and "ZeroDivisionError: division by zero" in text

        # Kernel output is data: terminal control sequences never reach the client.
        result = await client.call_tool("run", {"code": "print('\\x1b[31mred\\x1b[0m\\x07')"})
        assert text_of(result) == "Output:\nred"

        # The client's code is another agent's: the guard reads it, and the server goes on.
        result = await client.call_tool("run", {"code": "import subprocess"})
        assert result.is_error
        assert "Blocked by the security policy; the code did not run" in text_of(result)
        assert "subprocess" in text_of(result)

        result = await client.call_tool("inject", {"path": "flights.parquet", "name": "flights"})
        assert not result.is_error, text_of(result)
        assert "Injected `flights`" in text_of(result)
        result = await client.call_tool("run", {"code": "print(flights.delay.sum())"})
        assert text_of(result) == "Output:\n14.75"

        result = await client.call_tool("list_variables", {})
        listing = text_of(result)
        assert listing.startswith("Namespace (live)")
        assert "- flights: DataFrame" in listing and "- total: int = 42" in listing

        result = await client.call_tool("describe", {"name": "flights"})
        detail = text_of(result)
        assert "**flights**: DataFrame" in detail and "carrier" in detail and "12.25" in detail

        result = await client.call_tool("describe", {"name": "nothing_here"})
        assert result.is_error and "no variable named 'nothing_here'" in text_of(result)

        result = await client.call_tool(
            "run", {"code": "late = flights[flights.delay > 0].reset_index(drop=True)"}
        )
        assert not result.is_error
        result = await client.call_tool("retrieve", {"name": "late", "path": "out/late.parquet"})
        assert not result.is_error, text_of(result)
        assert "Saved `late`" in text_of(result)
        back = pd.read_parquet(tmp_path / "out" / "late.parquet")
        pd.testing.assert_frame_equal(back, frame[frame.delay > 0].reset_index(drop=True))

        # An existing file is never overwritten: nobody can be asked, so it is kept.
        result = await client.call_tool("retrieve", {"name": "total", "path": "out/late.parquet"})
        assert result.is_error and "Not saved" in text_of(result)
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "out" / "late.parquet"), back)

        result = await client.call_tool("inject", {"path": "missing.parquet"})
        assert result.is_error and "missing.parquet" in text_of(result)

        read = await client.read_resource("cave://namespace")
        (contents,) = read.contents
        assert isinstance(contents, TextResourceContents)
        assert "- flights: DataFrame" in contents.text
        read = await client.read_resource("cave://variable/late")
        (contents,) = read.contents
        assert isinstance(contents, TextResourceContents)
        assert "**late**: DataFrame" in contents.text
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == ["cave://variable/{name}"]
    # The session was recorded, the client's cells as the user's own.
    (session,) = (tmp_path / "sessions").iterdir()
    events = (session / "events.jsonl").read_text()
    assert "flights.delay.sum()" in events


async def test_variable_names_complete_in_the_variable_resource(tmp_path: Path) -> None:
    """`completion/complete` on `cave://variable/{name}` offers the namespace's names that
    start with what was typed (a client's resource picker); other references get none."""
    async with Client(cave_mcp(tmp_path, "--in-process"), read_timeout_seconds=60) as client:
        assert client.server_capabilities.completions is not None
        code = "delays = [1]\ndelay_mean = 1.0\nflights = 3\ndef describe_delays(): pass"
        assert not (await client.call_tool("run", {"code": code})).is_error
        template = ResourceTemplateReference(uri="cave://variable/{name}")
        result = await client.complete(template, {"name": "name", "value": "del"})
        assert result.completion.values == ["delay_mean", "delays"]
        assert result.completion.total == 2 and not result.completion.has_more
        everything = await client.complete(template, {"name": "name", "value": ""})
        assert {"delays", "delay_mean", "flights", "describe_delays"} <= set(
            everything.completion.values
        )
        other = ResourceTemplateReference(uri="cave://elsewhere/{name}")
        elsewhere = await client.complete(other, {"name": "name", "value": "d"})
        assert elsewhere.completion.values == []
