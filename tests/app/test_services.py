"""`AppServices`: lazy runtime, hooks in order, exit hooks exactly once."""

from __future__ import annotations

import pytest

from cave_tui.app.config import Config
from cave_tui.app.services import NO_MODEL_HELP, AppServices
from cave_tui.models import ScriptedModel


async def test_runtime_is_built_on_start_and_hooks_see_every_event():
    model = ScriptedModel(["```python\nv = 1\n```", "ok"])
    services = AppServices(Config(kernel=False), model=model)
    assert services.runtime is None and services.runtime_label == "ipython"
    ready = []
    services.ready_hooks.append(lambda s: ready.append(s.runtime))
    seen = []
    services.event_hooks.append(lambda e: seen.append(e.type.value))
    streamed = [e.type.value async for e in services.stream("go")]
    assert ready == [services.runtime] and services.runtime is not None
    assert seen == streamed and streamed[-1] == "final_response"
    direct = [e.type.value async for e in services.run_python("w = v + 1")]
    assert direct == ["code", "execution_output"] and seen[-2:] == direct
    assert await services.runtime.retrieve("w") == 2
    await services.shutdown()


async def test_a_failing_hook_never_breaks_the_turn():
    services = AppServices(Config(kernel=False), model=ScriptedModel(["fine"]))

    def broken(event):
        raise RuntimeError("recorder is down")

    services.event_hooks.append(broken)
    events = [e async for e in services.stream("go")]
    assert events[-1].content == "fine"
    await services.shutdown()


async def test_exit_hooks_run_once_in_order_even_when_one_fails():
    services = AppServices(Config(kernel=False))
    calls = []

    async def second():
        calls.append(2)

    def failing():
        raise OSError("disk full")

    services.exit_hooks += [lambda: calls.append(1), failing, second]
    await services.start()
    await services.shutdown()
    await services.shutdown()
    assert calls == [1, 2]
    assert any("disk full" in n for n in services.notices)


async def test_stream_without_model_explains(tmp_path):
    services = AppServices(Config(kernel=False))
    with pytest.raises(RuntimeError, match="No model is configured"):
        async for _ in services.stream("hi"):
            pass
    assert "cave demo" in NO_MODEL_HELP
    script = tmp_path / "s.yaml"
    script.write_text('- "hello"\n')
    services.set_model(f"scripted:{script}")
    assert services.agent is not None and services.model_label == "scripted:s.yaml"
    with pytest.raises(ValueError):
        services.set_model("scripted:/missing.yaml")
    await services.shutdown()


async def test_unknown_skills_dir_is_a_notice_not_a_crash(tmp_path):
    config = Config(skills=str(tmp_path / "none"), sandbox=False)  # the kernel, unsandboxed
    services = AppServices(config, model=ScriptedModel(["x"]))
    await services.start()
    assert any("skills directory not found" in n for n in services.notices)
    await services.shutdown()


async def test_the_agent_is_prepared_while_the_runtime_starts(tmp_path, monkeypatch):
    """The agent's imports and skills need no runtime: found while it boots, not after."""
    import asyncio
    import threading

    from cave_tui.app import agent_build
    from cave_tui.runtime.ipython import IPythonRuntime

    found = threading.Event()
    load_skills = agent_build.load_skills

    def recording(directories=()):
        found.set()
        return load_skills(directories)

    monkeypatch.setattr(agent_build, "load_skills", recording)

    class SlowRuntime(IPythonRuntime):
        seen_during_start = False

        async def start(self) -> None:
            self.seen_during_start = await asyncio.to_thread(found.wait, 10)
            await super().start()

    runtime = SlowRuntime()
    config = Config(kernel=False, skills=str(tmp_path / "none"))
    services = AppServices(config, model=ScriptedModel(["x"]), runtime=runtime)
    await services.start()
    assert runtime.seen_during_start
    assert services.agent is not None and services.agent.runtime is runtime
    assert callable(await runtime.retrieve("activate_skill"))  # bound once the runtime was up
    assert any("skills directory not found" in n for n in services.notices)
    await services.shutdown()
