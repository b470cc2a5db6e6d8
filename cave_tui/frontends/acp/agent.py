"""`CaveAcpAgent`: the SDK's `Agent` interface over the app layer (one runtime per process).

- initialize: cave's capabilities (`loadSession`, embedded context in prompts);
- session/new: a new cave conversation, recorded, on the one live namespace (every session
  of the process shares it); the first one continues the recording started with the server;
- session/load: `/load`'s resume path (`resume_here`): the recorded session's conversation
  and namespace, its events replayed to the client as session updates;
- session/prompt: a whole turn of cave's agent (`services.stream`), its events sent as they
  come (`EventUpdates`); a prompt starting with `/` runs that command (the command registry),
  one starting with `!` runs the rest as the user's own cell (as in the app);
- approval mode: each cell is a permission request showing its code (allow once / reject;
  rejected, it is skipped as the app's approval skips it);
- session/cancel: the turn's task is cancelled, which interrupts the cell (the namespace
  survives), and the prompt answers `cancelled`.

One conversation is live at a time: a prompt for a session that a later session/new or
session/load replaced is refused (-32602) and says to load it.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import shlex
from typing import TYPE_CHECKING, Any

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    update_agent_message_text,
)
from acp.helpers import update_available_commands
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    AudioContentBlock,
    AvailableCommand,
    AvailableCommandInput,
    CurrentModeUpdate,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    Implementation,
    PermissionOption,
    PromptCapabilities,
    ResourceContentBlock,
    SessionInfoUpdate,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    TextContentBlock,
    TextResourceContents,
    ToolCallUpdate,
    UnstructuredCommandInput,
)

from cave_tui import __version__
from cave_tui.agent import events as ev
from cave_tui.app.commands import CommandContext, load_commands
from cave_tui.app.commands.data import resume_here
from cave_tui.app.commands.registry import CommandError
from cave_tui.app.config import APPROVE_MODES
from cave_tui.app.services import NO_MODEL_HELP
from cave_tui.frontends.acp.front_end import AcpFrontEnd
from cave_tui.frontends.acp.updates import (
    EventUpdates,
    StopReason,
    Update,
    cell_title,
    code_content,
)
from cave_tui.printable import printable

if TYPE_CHECKING:
    from cave_tui.agent.approval import ApprovalRequest
    from cave_tui.app.services import AppServices
    from cave_tui.session import SessionRecorder

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
# Commands that only cave's own screens can carry out: not advertised over ACP.
SCREEN_ONLY = frozenset({"quit", "exit", "theme", "replay", "clear"})
ALLOW, REJECT = "allow", "reject"
PERMISSION_OPTIONS = [
    PermissionOption(option_id=ALLOW, name="Run this cell", kind="allow_once"),
    PermissionOption(option_id=REJECT, name="Skip it", kind="reject_once"),
]


def prompt_text(blocks: list[PromptBlock]) -> str:
    """The prompt's text: its text blocks, then each embedded text resource (its URI and text)
    and each linked resource's URI; images and audio are not read (not advertised)."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f"\n{resource.uri}:\n{resource.text}")
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"\n{block.uri}")
    return "".join(parts).strip()


def available_commands() -> list[AvailableCommand]:
    """cave's slash commands, as the protocol advertises them (screen-only ones left out)."""
    commands = []
    for command in load_commands().all():
        if command.name in SCREEN_ONLY:
            continue
        hint = AvailableCommandInput(root=UnstructuredCommandInput(hint=command.args))
        commands.append(
            AvailableCommand(
                name=command.name, description=command.help, input=hint if command.args else None
            )
        )
    return commands


# The session modes: cave's approval setting (APPROVE_MODES), a front end's mode picker.
_MODE_TEXTS = {
    "auto": ("Run cells", "The model's code runs as soon as it is written."),
    "ask": ("Ask before each cell", "Each cell is a permission request that shows its code."),
}
MODES = {
    mode: SessionMode(id=mode, name=_MODE_TEXTS[mode][0], description=_MODE_TEXTS[mode][1])
    for mode in APPROVE_MODES
}


class SessionReplaced(RequestError):
    """A prompt for a session that is not the live conversation any more."""

    def __init__(self, session_id: str) -> None:
        super().__init__(
            -32602,
            f"session {session_id} is not the live conversation of this cave acp "
            "(a later session/new or session/load replaced it): load it with session/load",
            {"sessionId": session_id},
        )


class CaveAcpAgent:
    """The ACP agent of one `AppServices` (started before the connection is served)."""

    def __init__(self, services: AppServices, *, trust: bool = False) -> None:
        self.services = services
        self.trust = trust  # `--trust`: a loaded session's pickles may load
        self.client: Client | None = None
        self.current: str | None = None  # the ACP session id of the live conversation
        self.mapper = EventUpdates()
        self.busy = asyncio.Lock()  # one prompt or load at a time
        self.turn: asyncio.Task[None] | None = None
        self.cancelled = False
        self._tasks: set[asyncio.Task[None]] = set()
        services.use_approver(self._approve)

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    # -- the protocol's methods ----------------------------------------------------------
    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:  # fmt: skip
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True, prompt_capabilities=PromptCapabilities(embedded_context=True)
            ),
            agent_info=Implementation(name="cave", title="cave", version=__version__),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        async with self.busy:
            recorder = self.services.session
            if self.current is not None or recorder is None:
                recorder = await self._fresh_recording()
            self.current = recorder.id
            self.mapper = EventUpdates()
        self._after_answer(self.current)
        return NewSessionResponse(session_id=self.current, modes=self._modes())

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        from cave_tui.session import SessionError, SessionStore

        services = self.services
        ui = AcpFrontEnd()
        async with self.busy:
            if services.agent is None:
                raise RequestError.invalid_params({"details": NO_MODEL_HELP})
            try:
                folder = SessionStore(services.sessions_dir).resolve(session_id)
            except SessionError as exc:
                raise RequestError.invalid_params({"details": str(exc)}) from None
            recorder = services.session
            if recorder is not None and recorder.dir.resolve() == folder.resolve():
                ui.session_loaded(services.transcript)  # already live: its events as shown
            else:
                try:
                    await resume_here(CommandContext(services, ui), folder, trust=self.trust)
                except CommandError as exc:
                    raise RequestError.invalid_params({"details": str(exc)}) from None
            self.current = session_id
            self.mapper = EventUpdates()
            for event in ui.loaded or []:
                await self._send_all(session_id, self.mapper.updates(event))
            if ui.text:
                await self._send(session_id, update_agent_message_text(ui.text))
        self._after_answer(session_id)
        return LoadSessionResponse(modes=self._modes())

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        """The front end's mode picker: cave's approval setting (`/approve`)."""
        if session_id != self.current:
            raise SessionReplaced(session_id)
        if mode_id not in MODES:
            raise RequestError.invalid_params(
                {"details": f"unknown mode {mode_id!r}: {' or '.join(MODES)}"}
            )
        self.services.config.approve = mode_id
        return SetSessionModeResponse()

    def _mode_update(self) -> CurrentModeUpdate:
        current = self.services.config.approve
        return CurrentModeUpdate(session_update="current_mode_update", current_mode_id=current)

    def _modes(self) -> SessionModeState:
        return SessionModeState(
            current_mode_id=self.services.config.approve, available_modes=list(MODES.values())
        )

    async def prompt(
        self, prompt: list[PromptBlock], session_id: str, **kwargs: Any
    ) -> PromptResponse:
        if session_id != self.current:
            raise SessionReplaced(session_id)
        text = prompt_text(prompt)
        async with self.busy:
            self.cancelled = False
            if text.startswith("/"):
                work = self._command(session_id, text)
            elif text.startswith("!"):
                work = self._own_cell(session_id, text[1:])
            elif self.services.agent is None:
                work = self._send(session_id, update_agent_message_text(NO_MODEL_HELP))
            else:
                work = self._turn(session_id, text)
            self.turn = asyncio.ensure_future(work)
            try:
                await self.turn
            except asyncio.CancelledError:
                if not self.cancelled:
                    raise
                still = self.services.live_runtime.cell_still_running
                await self._send_all(session_id, self.mapper.interrupted(still_running=still))
            finally:
                self.turn = None
            stop = StopReason.CANCELLED if self.cancelled else self.mapper.stop
            error = self.mapper.error
        await self._status(session_id)
        if error is not None and stop is StopReason.END_TURN:
            raise RequestError.internal_error({"details": error})
        return PromptResponse(stop_reason=stop.value)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """session/cancel: the prompt under way stops (its cell interrupted)."""
        turn = self.turn
        if session_id == self.current and turn is not None and not turn.done():
            self.cancelled = True
            turn.cancel()

    # -- a turn, a command ------------------------------------------------------------------
    async def _turn(self, session_id: str, text: str) -> None:
        mapper = self.mapper
        mapper.begin_turn()
        async for event in self.services.stream(text):
            if isinstance(event, ev.UserEvent):
                continue  # the client showed what its user typed
            await self._send_all(session_id, mapper.updates(event))

    async def _own_cell(self, session_id: str, code: str) -> None:
        """`!code`: the user's own cell, as in the app (no model; the guard does not read it),
        shown as a tool call like the agent's."""
        from cave_tui.agent.cells import CellAuthor

        self.mapper.begin_turn()
        async for event in self.services.run_python(code, author=CellAuthor.USER):
            await self._send_all(session_id, self.mapper.updates(event))

    async def _command(self, session_id: str, line: str) -> None:
        """Run a slash command through the registry; its lines are the answer."""
        self.mapper.begin_turn()
        ui = AcpFrontEnd(ask=lambda question: self._ask(session_id, question, line))
        name = line[1:].split(maxsplit=1)[0] if line[1:].strip() else ""
        if name in SCREEN_ONLY:
            ui.print(f"/{name}: not available over ACP (cave's own screens do it)")
        else:
            mode = self.services.config.approve
            await load_commands().dispatch(line, CommandContext(self.services, ui))
            if self.services.config.approve != mode:  # `/approve`, `/set approve`: the picker
                await self._send(session_id, self._mode_update())
        for event in ui.loaded or []:  # `/load`: the loaded conversation, replayed
            await self._send_all(session_id, self.mapper.updates(event))
        if ui.text:
            await self._send(session_id, update_agent_message_text(ui.text + "\n"))

    # -- questions to the client -------------------------------------------------------------
    async def _approve(self, request: ApprovalRequest) -> str | None:
        """Approval mode: the cell as a permission request; allowed, its code; else None."""
        session_id, cell = self.current, self.mapper.open_cell
        if session_id is None or self.client is None:
            return None
        call = ToolCallUpdate(
            tool_call_id=cell or f"cell-{self.mapper.cells}",
            title=cell_title(request.code),  # clients keep it as the cell's title
            kind="execute",
            status="pending",
            content=code_content(request.code),
        )
        answer = await self.client.request_permission(
            session_id=session_id, tool_call=call, options=PERMISSION_OPTIONS
        )
        outcome = answer.outcome
        allowed = isinstance(outcome, AllowedOutcome) and outcome.option_id == ALLOW
        return request.code if allowed else None

    async def _ask(self, session_id: str, question: str, line: str) -> bool:
        """A command's yes/no question as a permission request (its own tool call)."""
        if self.client is None:
            return False
        self.mapper.cells += 1
        call = ToolCallUpdate(
            tool_call_id=f"command-{self.mapper.cells}",
            title=printable(question),
            kind="other",
            status="pending",
            raw_input={"command": printable(shlex.split(line)[0]) if line.strip() else ""},
        )
        options = [
            PermissionOption(option_id=ALLOW, name="Yes", kind="allow_once"),
            PermissionOption(option_id=REJECT, name="No", kind="reject_once"),
        ]
        answer = await self.client.request_permission(
            session_id=session_id, tool_call=call, options=options
        )
        outcome = answer.outcome
        return isinstance(outcome, AllowedOutcome) and outcome.option_id == ALLOW

    # -- sending -----------------------------------------------------------------------------
    async def _send(self, session_id: str, update: Update | SessionInfoUpdate | Any) -> None:
        if self.client is not None:
            await self.client.session_update(session_id=session_id, update=update)

    async def _send_all(self, session_id: str, updates: list[Update]) -> None:
        for update in updates:
            await self._send(session_id, update)

    def _after_answer(self, session_id: str) -> None:
        """Once the answer to session/new or session/load is out: the commands and status."""

        async def send() -> None:
            await self._send(session_id, update_available_commands(available_commands()))
            await self._status(session_id)

        task = asyncio.ensure_future(send())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _status(self, session_id: str) -> None:
        """The session's status: the model and the runtime's memory, as the session info's
        title and in its `_meta` (`cave`: model, memory, runtime)."""
        services = self.services
        memory = services.runtime_memory
        model = services.model_label or "no model"
        title = f"cave · {model}" + (f" · {memory}" if memory else "")
        meta = {"cave": {"model": model, "memory": memory, "runtime": services.runtime_label}}
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        update = SessionInfoUpdate(
            session_update="session_info_update", title=printable(title), updated_at=now,
            field_meta=meta,
        )  # fmt: skip
        with contextlib.suppress(ConnectionError):
            await self._send(session_id, update)

    async def _fresh_recording(self) -> SessionRecorder:
        """A new conversation: the live recording closed, the agent's history emptied, a new
        recording of the same namespace started."""
        from cave_tui.session import SessionRecorder, SessionStore

        services = self.services
        recorder = services.session
        if recorder is not None:
            await recorder.close("completed")
            recorder.detach()
        if services.agent is not None:
            services.agent.conversation.replace([])
        services.transcript.clear()
        store = SessionStore(services.sessions_dir)
        fresh = SessionRecorder.create(
            store.root, label="cave acp", agent=services.agent, runtime=services.live_runtime
        )
        services.session = fresh
        return fresh
