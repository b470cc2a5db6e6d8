"""Approval mode over MCP (`cave mcp --approve ask`): a `run` cell is put to the client's
user by form elicitation (the code in the message, a boolean `run`) on the 2025 protocol
(initialize handshake) and on 2026-07-28 (InputRequiredResult) alike; `ask`'s cells and a
command's question (`retrieve`'s overwrite) are asked mid-call, on the 2025 versions; a
client that cannot be asked is refused, saying why."""

from __future__ import annotations

from pathlib import Path

from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters
from mcp_types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ErrorData

from tests.frontends.mcp.conftest import cave_mcp
from tests.frontends.mcp.test_stdio_tools import text_of

REPLIES = """\
- |
  ```python
  secret = 'model cell ran'
  ```
- Done.
"""


class User:
    """The client's user: answers each form with the next of *answers*, keeps what it saw."""

    def __init__(self, *answers: dict[str, bool]) -> None:
        self.answers = list(answers)
        self.seen: list[ElicitRequestFormParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        assert isinstance(params, ElicitRequestFormParams)
        self.seen.append(params)
        answer = self.answers.pop(0)
        if not answer:
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content=dict(answer))


def approving_server(folder: Path) -> StdioServerParameters:
    """`cave mcp --approve ask` with a scripted model, *folder* holding out.json."""
    (folder / "replies.yaml").write_text(REPLIES)
    (folder / "out.json").write_text("[1]")
    return cave_mcp(folder, "--in-process", "--approve", "ask", "--model", "scripted:replies.yaml")


async def test_a_client_that_cannot_be_asked_is_refused(tmp_path: Path) -> None:
    async with Client(approving_server(tmp_path), read_timeout_seconds=60) as client:
        for tool, arguments in (("run", {"code": "ran = 1"}), ("ask", {"question": "go"})):
            result = await client.call_tool(tool, arguments)
            assert result.is_error
            assert "approval mode is on" in text_of(result)
            assert "declared no elicitation capability" in text_of(result)
        result = await client.call_tool("list_variables", {})
        assert "ran" not in text_of(result) and "secret" not in text_of(result)


async def test_cells_and_questions_are_elicited_on_2025_versions(tmp_path: Path) -> None:
    user = User({"run": False}, {"run": True}, {"yes": True}, {"run": False})
    server = approving_server(tmp_path)
    async with Client(
        server, read_timeout_seconds=60, elicitation_callback=user, mode="legacy"
    ) as client:
        result = await client.call_tool("run", {"code": "declined = 1"})
        assert result.is_error and "the user did not approve" in text_of(result)
        result = await client.call_tool("run", {"code": "kept = [1, 2]\nkept"})
        assert not result.is_error, text_of(result)
        assert text_of(result) == "Output:\n[1, 2]\n[changed: kept]"
        assert "kept = [1, 2]" in user.seen[1].message  # the user saw the code
        assert list(user.seen[1].requested_schema["properties"]) == ["run"]

        # A command's question (overwrite a file) goes to the user too: yes, overwritten.
        result = await client.call_tool("retrieve", {"name": "kept", "path": "out.json"})
        assert not result.is_error, text_of(result)
        assert "out.json" in user.seen[2].message
        assert (tmp_path / "out.json").read_text().replace(" ", "").strip() == "[1,2]"

        # The agent's cell is asked about; declined, it does not run and the turn goes on.
        result = await client.call_tool("ask", {"question": "go"})
        assert not result.is_error, text_of(result)
        assert "secret = 'model cell ran'" in user.seen[3].message
        result = await client.call_tool("list_variables", {})
        assert "kept" in text_of(result)
        assert "declined" not in text_of(result) and "secret" not in text_of(result)


async def test_a_run_cell_is_elicited_on_2026_07_28(tmp_path: Path) -> None:
    user = User({"run": False}, {"run": True})
    server = approving_server(tmp_path)
    async with Client(server, read_timeout_seconds=60, elicitation_callback=user) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("run", {"code": "declined = 1"})
        assert result.is_error and "the user did not approve" in text_of(result)
        result = await client.call_tool("run", {"code": "kept = 7"})
        assert not result.is_error and text_of(result).endswith("[changed: kept]")
        assert "kept = 7" in user.seen[1].message
        # Nothing can be asked while a tool runs on this version: refused, saying why.
        result = await client.call_tool("ask", {"question": "go"})
        assert result.is_error and "cannot be asked while a tool runs" in text_of(result)
        result = await client.call_tool("retrieve", {"name": "kept", "path": "out.json"})
        assert result.is_error and "Not saved" in text_of(result)
        assert (tmp_path / "out.json").read_text() == "[1]"
        assert len(user.seen) == 2
