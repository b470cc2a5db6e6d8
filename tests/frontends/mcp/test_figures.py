"""`run` returns the figures a cell displayed as MCP image content (image/png, base64 in
`data`), not as text: `plt.show()` and a figure left open at the cell's end, in process
and with the kernel; a display that is no PNG is not passed on."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from mcp import Client
from mcp_types import CallToolResult, ImageContent, TextContent

from tests.frontends.mcp.conftest import cave_mcp

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SHOWN = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()"
LEFT_OPEN = "fig, ax = plt.subplots()\nax.bar(['a', 'b'], [3, 4])\nfig"
NOT_PNG = (
    "from IPython.display import display\n"
    "display({'image/png': 'bm90IGEgcG5n', 'text/plain': 'fake'}, raw=True)"
)


def images_of(result: CallToolResult) -> list[bytes]:
    """The PNGs of a reply (its image blocks), after its one text block."""
    assert not result.is_error, result.content
    first, *rest = result.content
    assert isinstance(first, TextContent)
    pngs = []
    for block in rest:
        assert isinstance(block, ImageContent) and block.mime_type == "image/png"
        pngs.append(base64.b64decode(block.data, validate=True))
    return pngs


@pytest.mark.parametrize("runtime", ["--in-process", "--kernel"])
async def test_run_returns_figures_as_images(tmp_path: Path, runtime: str) -> None:
    async with Client(cave_mcp(tmp_path, runtime), read_timeout_seconds=60) as client:
        (shown,) = images_of(await client.call_tool("run", {"code": SHOWN}))
        assert shown.startswith(PNG_MAGIC)
        result = await client.call_tool("run", {"code": LEFT_OPEN})
        (left_open,) = images_of(result)
        assert left_open.startswith(PNG_MAGIC) and left_open != shown
        assert "iVBOR" not in str(result.content[0])  # the PNG is not in the text
        # The figures were closed with their cell: the next cell shows none.
        assert images_of(await client.call_tool("run", {"code": "1 + 1"})) == []
        if runtime == "--kernel":  # what a kernel displays is checked: no PNG, no image
            assert images_of(await client.call_tool("run", {"code": NOT_PNG})) == []
