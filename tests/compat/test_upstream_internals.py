"""Upstream names that its own test suite (and code written against it) reaches for.

Each test pins one piece that upstream's suite, run renamed against cave_tui
(docs/upstream-compat.md), needed: module paths, registries by kind, the executor,
parser state, skill registry and messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pytest

from cave_tui import CaveAgent
from cave_tui.models import ScriptedModel
from cave_tui.parsing import SegmentType, StreamingTextParser
from cave_tui.runtime import Function, IPythonRuntime, Type, TypeSchemaExtractor, Variable
from cave_tui.security import FunctionRule, ImportRule, SecurityChecker, SecurityError
from cave_tui.skills import Skill, SkillDiscovery


@dataclass
class Light:
    room: str


class Lock:
    def lock(self) -> None:
        """Lock it."""


def switch(light: Light) -> Lock:
    return Lock()


# -- runtime ---------------------------------------------------------------------------------
def test_the_runtime_lists_its_items_by_kind_as_upstream_registries():
    runtime = IPythonRuntime(
        functions=[Function(switch)],
        variables=[Variable("hall", Light("hall")), Variable("n", 3)],
        types=[Type(Lock, "A door lock")],
    )
    assert set(runtime._functions) == {"switch"}
    assert set(runtime._variables) == {"hall", "n"}
    assert set(runtime._types) == {"Light", "Lock"}  # Light came with `hall` and `switch`
    assert runtime._types["Lock"].include_schema and runtime._types["Lock"].description
    assert not runtime._types["Light"].include_schema
    runtime._types.clear()  # a copy: the runtime keeps its items
    assert set(runtime._types) == {"Light", "Lock"}
    assert IPythonRuntime(variables=[Variable("xs", [1])])._types == {}


async def test_a_name_the_runtime_lacks_is_not_managed_by_it():
    runtime = IPythonRuntime()
    with pytest.raises(KeyError, match="not managed"):
        await runtime.retrieve("nothing")


async def test_upstreams_executor_runs_cells_and_refuses_with_a_security_error():
    from cave_tui.runtime.executor import ExecutionResult, IPythonExecutor, check_security

    checker = SecurityChecker([FunctionRule({"eval"})])
    executor = IPythonExecutor(security_checker=checker)
    executor.inject_into_namespace("base", 40)
    ok = await executor.execute("answer = base + 2")
    assert ok.success and await executor.get_from_namespace("answer") == 42
    refused = await executor.execute("eval('1')")
    assert not refused.success and isinstance(refused.error, SecurityError)
    assert "eval" in refused.error.message
    await executor.reset()
    assert await executor.get_from_namespace("answer") is None
    assert check_security(checker, "x = 1") is None and check_security(None, "eval('1')") is None
    blocked = check_security(checker, "eval('1')")
    assert isinstance(blocked, ExecutionResult) and isinstance(blocked.error, SecurityError)


def test_type_annotations_format_as_upstream_under_its_private_name():
    fmt = TypeSchemaExtractor._format_type_annotation
    assert fmt(Optional[str]) == "Optional[str]"  # noqa: UP045 (upstream's spelling)
    assert fmt(list[dict[str, list[int]]]) == "list[dict[str, list[int]]]"
    assert fmt(None) == "None" and fmt("Later") == "Later"


def test_upstream_model_module_paths_hold_the_same_classes():
    import cave_tui.models as models
    from cave_tui.models.litellm import LiteLLMModel
    from cave_tui.models.openai import OpenAIServerModel

    assert OpenAIServerModel is models.OpenAIServerModel
    assert LiteLLMModel is models.LiteLLMModel


# -- security wording ----------------------------------------------------------------------
def test_violations_say_function_and_syntax_error_as_upstreams_do():
    checker = SecurityChecker([FunctionRule({"eval"}), ImportRule({"os"})])
    assert "function" in checker.check_code("eval('1')")[0].message
    assert "function" in checker.check_code("f = eval")[0].message
    assert "syntax error" in checker.check_code("def f(\n")[0].message.lower()


# -- parser state ------------------------------------------------------------------------------
def test_the_parser_shows_upstreams_state_while_streaming():
    parser = StreamingTextParser()
    parser.process_chunk("Look: ``")
    assert parser.mode is StreamingTextParser.Mode.TEXT
    assert parser.text_buffer == "``" and parser.backtick_count == 2
    parser.process_chunk("`python\nx = 1\n")
    assert parser.mode is StreamingTextParser.Mode.CODE and parser.in_code_block
    assert parser.code_buffer == "x = 1\n" and parser.text_buffer == ""
    segments = parser.process_chunk("```")
    assert [s.type for s in segments] == [SegmentType.CODE]
    parser.flush()
    assert (parser.mode, parser.text_buffer, parser.code_buffer, parser.backtick_count) == (
        StreamingTextParser.Mode.TEXT,
        "",
        "",
        0,
    )


# -- skills ------------------------------------------------------------------------------------
def test_an_agent_with_skills_has_upstreams_skill_registry():
    skill = Skill(name="tidy", description="Tidy data", body_content="Be tidy.")
    agent = CaveAgent(ScriptedModel([]), skills=[skill], display=False)
    assert [s.name for s in agent._skill_registry.list_skills()] == ["tidy"]
    assert agent._skill_registry.get_skill("tidy") is skill


def test_skill_discovery_errors_use_upstreams_words(tmp_path):
    with pytest.raises(SkillDiscovery.Error, match="Skill file not found"):
        SkillDiscovery.from_file(tmp_path / "absent.md")
    with pytest.raises(SkillDiscovery.Error, match="Skills directory not found"):
        SkillDiscovery.from_directory(tmp_path / "absent")
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "SKILL.md").write_text("Just text")
    with pytest.raises(SkillDiscovery.Error, match="No YAML frontmatter found"):
        SkillDiscovery.from_file(folder / "SKILL.md")
    (folder / "SKILL.md").write_text("---\nname: [plain\n---\nbody")
    with pytest.raises(SkillDiscovery.Error, match="Invalid YAML"):
        SkillDiscovery.from_file(folder / "SKILL.md")
