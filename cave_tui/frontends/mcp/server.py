"""`cave mcp`'s server: the SDK's `MCPServer` over stdio, wired to `NamespaceTools`.

`build_server` declares the tools (run, ask, list_variables, describe, inject, retrieve) and
the resources (`cave://namespace`, `cave://variable/{name}`); `run_stdio` serves it until
the client closes stdin. The session's lifecycle around it is `serving.serve`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.models import InitializationOptions
from mcp_types import (
    Completion,
    CompletionArgument,
    CompletionContext,
    PromptReference,
    ResourceTemplateReference,
    ToolAnnotations,
)

from cave_tui import __version__
from cave_tui.frontends.mcp.asking import ClientQuestions
from cave_tui.frontends.mcp.cell_tool import Content, content, run_tool
from cave_tui.frontends.mcp.changes import ResourceChanges
from cave_tui.frontends.mcp.progress import ProgressTeller
from cave_tui.frontends.mcp.tools import NamespaceTools, NoSuchVariable, ToolFailed

if TYPE_CHECKING:
    from cave_tui.app.services import AppServices

T = TypeVar("T")

VARIABLE_URI = "cave://variable/{name}"
COMPLETIONS = 100  # names offered at most in one completion (the spec's own limit)

INSTRUCTIONS = (
    "cave keeps a live, persistent Python namespace (pandas frames, arrays, any object). "
    "`run` executes Python in it (state persists between calls; figures come back as "
    "images); `ask` has cave's own agent answer a question by running cells there; "
    "`list_variables` and `describe` summarise what it holds; `inject` loads a file into it "
    "and `retrieve` saves a variable to a file. Cells are checked by cave's guard; a refused "
    "cell is an error result saying why."
)


def build_server(services: AppServices) -> MCPServer:
    """The MCP server of *services* (its runtime started before a tool is called)."""
    tools = NamespaceTools(services)
    changes = ResourceChanges(services)
    server: MCPServer = MCPServer(
        name="cave",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        subscriptions=changes.bus,
    )

    run = run_tool(tools)

    async def ask(question: str, ctx: Context[Any, Any]) -> Content:
        """Ask cave's own agent a question about the live data: it writes and runs Python
        in the namespace (a whole turn) and answers. Returns its answer and the cells it ran
        (code and short output). Sends progress notifications while it runs."""
        async with ProgressTeller(ctx.report_progress).beating() as teller:
            reply = await _reply(tools.ask(question, ClientQuestions(ctx), teller.tell))
        return content(reply.text, reply.figures)

    async def list_variables() -> str:
        """List the variables, functions and types of the live namespace, each summarised
        (type, shape, columns, a preview), within a bounded size."""
        return await _reply(tools.list_variables())

    async def describe(name: str) -> str:
        """Describe one variable in detail: type, shape, size, a frame's head, dtypes and
        describe() (bounded)."""
        return await _reply(tools.describe(name))

    async def inject(path: str, ctx: Context[Any, Any], name: str | None = None) -> str:
        """Load a data file (parquet, CSV, JSON, Excel, npy, …; PATH:encoding=ENC:sep=SEP
        or PATH:sheet=NAME) or pkg:MODULE.ATTR into the namespace, as NAME (default: from
        the file's name). Relative paths are from cave's working folder."""
        return await _reply(tools.inject(path, name, ClientQuestions(ctx)))

    async def retrieve(name: str, ctx: Context[Any, Any], path: str | None = None) -> str:
        """Save variable NAME to a file (frame: parquet, array: npy, data: json, else
        pickle), to PATH or the session's retrieved/ folder; an existing file is replaced
        only when the user says yes."""
        return await _reply(tools.retrieve(name, path, ClientQuestions(ctx)))

    writes = ToolAnnotations(destructive_hint=False, open_world_hint=False)
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    for tool, hints in (
        (run, ToolAnnotations(open_world_hint=True)),
        (ask, ToolAnnotations(open_world_hint=True)),
        (list_variables, reads),
        (describe, reads),
        (inject, writes),
        (retrieve, writes),
    ):
        # Text replies only (no structured copy of the same text); the docstring as is.
        description = inspect.cleandoc(tool.__doc__ or "")
        server.add_tool(
            tool,
            name=tool.__name__,
            description=description,
            annotations=hints,
            structured_output=False,
        )

    @server.resource("cave://namespace", name="namespace", mime_type="text/plain")
    async def namespace() -> str:
        """The live namespace, summarised as `list_variables` does."""
        return await tools.list_variables()

    @server.resource(VARIABLE_URI, name="variable", mime_type="text/plain")
    async def variable(name: str) -> str:
        """One variable described as `describe` does."""
        try:
            return await tools.describe(unquote(name))
        except NoSuchVariable as exc:
            raise ResourceNotFoundError(str(exc)) from None

    @server.completion()
    async def complete(
        ref: ResourceTemplateReference | PromptReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion | None:
        """The variable names that start with what was typed, for `cave://variable/{name}`."""
        if not isinstance(ref, ResourceTemplateReference) or ref.uri != VARIABLE_URI:
            return None
        if argument.name != "name":
            return None
        names = await tools.variable_names(unquote(argument.value))
        return Completion(
            values=names[:COMPLETIONS], total=len(names), has_more=len(names) > COMPLETIONS
        )

    del namespace, variable, complete  # registered
    changes.install(server._lowlevel_server)  # resources/list and subscribe: cave's own
    return server


def initialization_options(server: MCPServer) -> InitializationOptions:
    """The lowlevel server's options, declaring `resources.listChanged` (2025 versions;
    `resources.subscribe` comes from the subscribe handler, 2026-07-28's from the bus)."""
    lowlevel = server._lowlevel_server
    return lowlevel.create_initialization_options(NotificationOptions(resources_changed=True))


async def _reply(work: Awaitable[T]) -> T:
    """Await a `NamespaceTools` call; `ToolFailed` becomes the SDK's error result."""
    try:
        return await work
    except ToolFailed as exc:
        raise ToolError(str(exc)) from None


async def run_stdio(server: MCPServer) -> None:
    """`server.run_stdio_async()` over cave's stdio transport (malformed lines answered)."""
    from cave_tui.frontends.mcp.transport import stdio_streams

    lowlevel = server._lowlevel_server  # the SDK's own `run_stdio_async` runs it so
    async with stdio_streams() as (read, write):
        await lowlevel.run(read, write, initialization_options(server))
