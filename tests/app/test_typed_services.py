"""Issue 32.1: `AppServices` is a facade of typed parts: the recording held once, the
provider's price found by a capability (not a class name), runtime capabilities declared
on `Runtime`, and the approval hook given the step it approves."""

from __future__ import annotations

from cave_tui.agent.approval import ApprovalRequest
from cave_tui.app.config import Config
from cave_tui.app.runtime_report import RuntimeReport
from cave_tui.app.services import AppServices
from cave_tui.app.startup import DataOptions, install
from cave_tui.models import ScriptedModel
from cave_tui.models.base import Usage
from cave_tui.models.litellm_model import LiteLLMModel
from cave_tui.runtime.ipython import IPythonRuntime


def test_the_recording_has_one_place(tmp_path):
    services = AppServices(Config(kernel=False), runtime=IPythonRuntime())
    features = install(services, DataOptions(sessions_dir=tmp_path))
    marker = object()
    services.session = marker  # e.g. `/load` switching sessions
    assert features.recorder is marker and services.data_features is features
    services.session = None  # `/load` failed after closing the current one
    assert features.recorder is None


class HostedModel(LiteLLMModel):
    """A provider's model under another class name: still priced."""


async def test_the_price_comes_from_the_models_capability_not_its_class_name():
    scripted = AppServices(Config(kernel=False), model=ScriptedModel(["ok"]))
    assert not scripted.priced and await scripted.cost(Usage(10, 5, 15)) is None
    hosted = AppServices(
        Config(kernel=False), model=HostedModel("openai/gpt-4o-mini", api_key="sk-test")
    )
    assert hosted.priced and type(hosted.model).__name__ != "LiteLLMModel"
    cost = await hosted.cost(Usage(1000, 1000, 2000))
    assert cost is not None and cost > 0


def test_runtime_capabilities_are_declared_on_the_base():
    runtime = IPythonRuntime()
    assert runtime.in_process and not runtime.isolated
    assert (runtime.sandbox, runtime.private_network, runtime.workdir) == (False, False, None)
    report = RuntimeReport(Config(kernel=False), runtime)
    assert report.sandbox_banner is None
    assert report.boundary_notice.startswith("Code runs inside this process")


async def test_the_approver_is_given_each_step_it_approves():
    replies = ["```python\na = 1\n```", "```python\nb = a + 1\n```", "done"]
    services = AppServices(Config(kernel=False, approve="ask"), model=ScriptedModel(replies))
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> str | None:
        asked.append(request)
        return request.code if request.step == 1 else None  # the second is skipped

    services.use_approver(approve)
    events = [e async for e in services.stream("go")]
    assert [(r.step, r.code) for r in asked] == [(1, "a = 1"), (2, "b = a + 1")]
    assert await services.runtime.retrieve("a") == 1
    assert "b" not in await services.runtime.names()
    assert events[-1].content == "done"
    await services.shutdown()
