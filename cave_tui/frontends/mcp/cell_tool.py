"""`cave mcp`'s `run` tool: a cell approved first (approval mode), its reply as MCP content.

No `from __future__ import annotations` here: the SDK reads the tool's signature, and its
`Resolve(approval)` names a function local to `run_tool`, which only an annotation
evaluated at definition time can hold.
"""

import base64
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any

from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, Elicit, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ImageContent, TextContent

from cave_tui.frontends.mcp.asking import Consent, RunCell, approval_request, consent_of
from cave_tui.frontends.mcp.progress import ProgressTeller
from cave_tui.frontends.mcp.tools import NamespaceTools, ToolFailed

Content = list[TextContent | ImageContent]


def content(text: str, figures: Sequence[bytes]) -> Content:
    """A reply as MCP content: its text, then each figure as a PNG image block."""
    images = [
        ImageContent(data=base64.b64encode(png).decode("ascii"), mime_type="image/png")
        for png in figures
    ]
    return [TextContent(text=text), *images]


def run_tool(tools: NamespaceTools) -> Callable[..., Awaitable[Content]]:
    """The `run` tool of *tools*: in approval mode, the SDK elicits the approval before the
    body runs (`approval`), on every protocol version; progress told while the cell runs
    (a heartbeat, when the request carried a progressToken)."""

    async def approval(code: str, ctx: Context[Any, Any]) -> Consent | Elicit[RunCell]:
        # async: the SDK runs a sync resolver on a worker thread, a thread hop per call
        return approval_request(code, ctx, asked=tools.approval_on)

    async def run(
        code: str,
        ctx: Context[Any, Any],
        approved: Annotated[ElicitationResult[RunCell], Resolve(approval)],
    ) -> Content:
        """Run Python code in cave's live namespace (variables persist between calls).
        Returns what it printed and the value of its last expression; the head and tail of
        a long output; the figures it displayed (matplotlib) as PNG images; a traceback as
        an error result. In approval mode the user is asked first."""
        try:
            async with ProgressTeller(ctx.report_progress).beating() as teller:
                await teller.tell("running the cell")
                reply = await tools.run(code, consent_of(approved))
        except ToolFailed as exc:
            raise ToolError(str(exc)) from None
        return content(reply.text, reply.figures)

    return run
