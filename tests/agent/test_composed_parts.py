"""`CaveAgent` is composed of its conversation, prompt builder and extensions (no mixins),
and keeps the public and upstream-era names that delegate to them."""

from cave_tui import CaveAgent
from cave_tui.agent.conversation import Conversation
from cave_tui.agent.extensions import Extensions
from cave_tui.agent.request import PromptBuilder
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime


def test_the_agent_has_no_mixin_halves():
    assert CaveAgent.__mro__ == (CaveAgent, object)


async def test_the_parts_are_the_agents_and_its_methods_delegate_to_them():
    agent = CaveAgent(ScriptedModel([]), IPythonRuntime(), display=False, instructions="Be brief.")
    assert isinstance(agent.conversation, Conversation)
    assert isinstance(agent.prompt, PromptBuilder) and isinstance(agent.extensions, Extensions)
    assert agent.build_system_prompt() == agent.prompt.system_prompt()
    assert agent.system_prompt().startswith("Be brief.")
    agent.instructions = "Be thorough."  # settings are read live
    assert agent.messages[0] == {"role": "system", "content": agent.prompt.system_prompt()}
    assert agent.messages[0]["content"].startswith("Be thorough.")
    agent.conversation.add_task("hi")
    request = await agent.build_request()
    assert request[-1]["content"].endswith("hi") and "Namespace (live)" in request[-1]["content"]


def test_upstream_era_private_names_read_and_set_the_extensions():
    agent = CaveAgent(ScriptedModel([]), IPythonRuntime(), display=False, context_window=8000)
    assert agent._compactor is agent.compactor is agent.extensions.compactor is not None
    agent._compactor = None
    assert agent.compactor is None and agent.extensions.compactor is None
    seen: list[object] = []
    agent.add_event_sink(seen.append)
    assert agent._sinks == [seen.append] and agent._sinks is agent.extensions.sinks
    assert agent._skill_registry is agent.extensions.skill_registry
    assert agent._skill_bridge is None
