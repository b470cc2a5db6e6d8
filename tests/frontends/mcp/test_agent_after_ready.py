"""`cave mcp` builds cave's agent after its start, in the background: `run` and the other
tools answer before it is built; `ask` waits for it, and a build that failed is `ask`'s
clear error while the server goes on serving. `cave acp` (and the app) still build it
before the start's ready hooks."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from cave_tui.app import protocol_server
from cave_tui.app.config import Config
from cave_tui.app.protocol_server import serve_protocol
from cave_tui.app.services import AppServices
from cave_tui.app.startup import DataOptions
from cave_tui.frontends.mcp.tools import NamespaceTools, ToolFailed
from cave_tui.models.base import Model
from cave_tui.models.scripted import ScriptedModel
from cave_tui.session.store import read_meta

REPLIES = ["```python\nanswer = x * 10\nprint(answer)\n```", "It is 20."]
BLOCKED = 30.0  # how long a held build waits before it gives up (the test failed by then)


class HeldModel(ScriptedModel):
    """A scripted model whose build blocks until `release` (the build reads `server`, as
    it does the embedded model's), and then fails if told to."""

    def __init__(self, *, fail: bool = False) -> None:
        super().__init__(REPLIES, model_id="scripted:held")
        self.released = threading.Event()
        self.asked = threading.Event()  # the build has begun reading the model
        self.fail = fail

    @property
    def server(self) -> None:
        self.asked.set()
        if not self.released.wait(BLOCKED):
            raise TimeoutError("the test never released the build")
        if self.fail:
            raise OSError("the model's weights are unreadable")
        return None


Work = Callable[[AppServices], Awaitable[None]]  # the server: what a client does


@pytest.fixture(autouse=True)
def _build_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build begins as soon as the server runs (not `AGENT_AFTER` s later): held by
    the model, it is under way while the client's first requests are answered."""
    monkeypatch.setattr(protocol_server, "AGENT_AFTER", 0.0)


def serve(
    tmp_path: Path,
    model: HeldModel | None,
    work: Work,
    *,
    agent_later: bool,
    resume: str | None = None,
    later: Callable[[], Model] | None = None,
) -> int:
    """`serve_protocol` over the in-process runtime with *model* (or one named for *later*),
    its server being *work*."""
    services = AppServices(Config(kernel=False), model=model)
    if later is not None:
        services.models.later(later)

    async def main() -> int:
        return await serve_protocol(
            services,
            DataOptions(sessions_dir=tmp_path / "sessions", resume=resume),
            name="cave test",
            prepare=lambda: lambda: work(services),
            agent_later=agent_later,
        )

    return asyncio.run(main())


def ask_then_run(seen: dict[str, str]) -> Work:
    """A client that asks (the error `ask` gives kept in *seen*), then runs a cell."""

    async def work(services: AppServices) -> None:
        tools = NamespaceTools(services)
        with pytest.raises(ToolFailed) as failed:
            await tools.ask("anything?")
        seen["ask"] = str(failed.value)
        seen["run"] = (await tools.run("1 + 1")).text

    return work


def test_run_answers_before_the_agent_is_built_and_ask_waits_for_it(tmp_path: Path) -> None:
    model = HeldModel()
    seen: dict[str, object] = {}

    async def work(services: AppServices) -> None:
        tools = NamespaceTools(services)
        assert await asyncio.to_thread(model.asked.wait, BLOCKED)  # the build is held now
        reply = await tools.run("x = 2\nx")
        seen["run"] = reply.text
        seen["agent while held"] = services.agent
        seen["listed"] = await tools.list_variables()
        model.released.set()
        turn = await tools.ask("what is x times ten?")
        seen["answer"] = turn.text
        seen["agent"] = services.agent
        recorder = services.session
        assert recorder is not None
        seen["recorded agent"] = recorder.agent
        seen["folder"] = recorder.dir

    try:
        assert serve(tmp_path, model, work, agent_later=True) == 0
    finally:
        model.released.set()
    assert str(seen["run"]).startswith("Output:\n2")
    assert seen["agent while held"] is None
    assert "x" in str(seen["listed"])
    assert str(seen["answer"]).startswith("It is 20.")
    assert seen["agent"] is not None and seen["recorded agent"] is seen["agent"]
    meta = read_meta(Path(str(seen["folder"])))
    assert meta is not None
    assert meta["model"] == "scripted:held"
    assert meta["made_by"] == "recorded live with scripted:held"


def test_a_failed_build_is_asks_error_and_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = HeldModel(fail=True)
    model.released.set()
    seen: dict[str, str] = {}

    work = ask_then_run(seen)
    assert serve(tmp_path, model, work, agent_later=True) == 0
    assert "cave's agent could not be built" in seen["ask"]
    assert "OSError: the model's weights are unreadable" in seen["ask"]
    assert seen["run"] == "Output:\n2"
    assert "cave: cave's agent could not be built: OSError" in capsys.readouterr().err


def test_a_model_named_for_later_is_built_with_the_agent_not_by_the_start(
    tmp_path: Path,
) -> None:
    """`cave mcp`'s embedded model is named at the start and built by the agent's build
    (`CurrentModel.later`): the start and `run` never wait for it, `ask` gets it."""
    built = HeldModel()
    calls: list[str] = []

    def build() -> Model:
        calls.append(threading.current_thread().name)
        built.asked.set()
        if not built.released.wait(BLOCKED):
            raise TimeoutError("the test never released the build")
        return built

    seen: dict[str, object] = {}

    async def work(services: AppServices) -> None:
        seen["model at the start"] = services.model
        seen["named"] = services.models.named
        tools = NamespaceTools(services)
        assert await asyncio.to_thread(built.asked.wait, BLOCKED)  # the build began, held
        seen["run"] = (await tools.run("x = 2\nx")).text
        built.released.set()
        seen["answer"] = (await tools.ask("what is x times ten?")).text
        seen["model"] = services.model
        assert services.agent is not None
        seen["agent's model"] = services.agent.model

    try:
        assert serve(tmp_path, None, work, agent_later=True, later=build) == 0
    finally:
        built.released.set()
    assert seen["model at the start"] is None and seen["named"] is True
    assert str(seen["run"]).startswith("Output:\n2")
    assert str(seen["answer"]).startswith("It is 20.")
    assert seen["model"] is built and seen["agent's model"] is built
    assert len(calls) == 1 and calls[0] != threading.main_thread().name  # once, off the loop


def test_a_model_named_for_later_that_cannot_be_built_is_asks_error(tmp_path: Path) -> None:
    def build() -> Model:
        raise ValueError("no such GGUF file: /nowhere/model.gguf")

    seen: dict[str, str] = {}

    work = ask_then_run(seen)
    assert serve(tmp_path, None, work, agent_later=True, later=build) == 0
    assert "ValueError: no such GGUF file: /nowhere/model.gguf" in seen["ask"]
    assert seen["run"] == "Output:\n2"


def test_without_agent_later_the_agent_is_built_before_the_server_runs(tmp_path: Path) -> None:
    model = HeldModel()
    model.released.set()
    seen: dict[str, object] = {}

    async def work(services: AppServices) -> None:
        seen["agent"] = services.agent

    assert serve(tmp_path, model, work, agent_later=False) == 0
    assert seen["agent"] is not None


def test_resume_builds_the_agent_during_the_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--resume` replays into the agent: the start builds it for the resume, as before."""
    first = HeldModel()
    first.released.set()
    seen: dict[str, object] = {}

    async def record(services: AppServices) -> None:
        await NamespaceTools(services).run("kept = 41 + 1")
        assert services.session is not None
        seen["id"] = services.session.id

    assert serve(tmp_path, first, record, agent_later=True) == 0
    again = HeldModel()
    again.released.set()

    async def resumed(services: AppServices) -> None:
        seen["agent"] = services.agent
        assert services.session is not None
        seen["resumed"] = services.session.id

    assert serve(tmp_path, again, resumed, agent_later=True, resume=str(seen["id"])) == 0
    assert seen["agent"] is not None  # built by the start, for the resume
    assert seen["resumed"] == seen["id"]
    assert f"resumed session {seen['id']}" in capsys.readouterr().err


def test_cave_mcp_names_the_embedded_model_and_builds_any_other_at_once(tmp_path: Path) -> None:
    """`build_services(local_later=True)` (what `cave mcp` asks) leaves the embedded model,
    here a `--gguf` file, to the agent's build; a named provider's model is built as before,
    so a bad `--model` still stops the start."""
    from cave_tui.app.launch_options import LaunchOptions, SettingValue
    from cave_tui.frontends.cli.launch import build_services
    from cave_tui.models.local import LocalModel

    gguf = tmp_path / "small.gguf"
    gguf.write_bytes(b"GGUF" + bytes(60))
    settings: dict[str, SettingValue] = {"local_model": str(gguf), "kernel": False}
    named = build_services(LaunchOptions(settings=settings), need_model=False, local_later=True)
    assert named.model is None and named.models.named
    model = named.models.resolve()
    assert isinstance(model, LocalModel) and named.models.model is model
    assert not model.server.alive  # built, not started: the agent's build warms it up
    at_once = build_services(LaunchOptions(settings=settings), need_model=False)
    assert isinstance(at_once.model, LocalModel)
    script = tmp_path / "replies.json"
    script.write_text('["It is 20."]')
    scripted = build_services(
        LaunchOptions(settings={"model": f"scripted:{script}", "kernel": False}),
        need_model=False,
        local_later=True,
    )
    assert scripted.model is not None and scripted.model.label.startswith("scripted")
