"""Upstream names that its own test suite (and code written against it) reaches for.

Each test pins one piece that upstream's suite, run renamed against cave_tui
(docs/upstream-compat.md), needed: module paths, registries by kind, the executor,
parser state, the compaction tiers, skill registry and messages.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Optional

import pytest

from cave_tui import CaveAgent
from cave_tui.compaction import CompactionState, compact_if_needed
from cave_tui.compaction.prompts import MICROCOMPACT_PLACEHOLDER, extract_summary
from cave_tui.compaction.strategies import (
    KEEP_RECENT_EXECUTION_RESULTS,
    MAX_CONSECUTIVE_FAILURES,
    full_compact,
    microcompact,
    trim_fallback,
)
from cave_tui.compaction.tokens import compact_threshold, estimate_tokens
from cave_tui.models import ScriptedModel
from cave_tui.parsing import SegmentType, StreamingTextParser
from cave_tui.runtime import Function, IPythonRuntime, Type, TypeSchemaExtractor, Variable
from cave_tui.security import FunctionRule, ImportRule, SecurityChecker, SecurityError
from cave_tui.skills import Skill, SkillDiscovery
from cave_tui.types import (
    AssistantMessage,
    CodeExecutionMessage,
    ExecutionResultMessage,
    MessageRole,
    SystemMessage,
    UserMessage,
)


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


# -- compaction ----------------------------------------------------------------------------
def _turns(n: int, size: int = 200) -> list[Any]:
    out: list[Any] = []
    for i in range(n):
        out.append(CodeExecutionMessage(f"```python\nprint({i})\n```"))
        out.append(ExecutionResultMessage(f"out {i} " + "x" * size))
    return out


def test_upstream_tiers_clear_summarise_and_trim():
    messages = _turns(10)
    cleared = microcompact(messages)
    placeholders = [m for m in cleared if m.content == MICROCOMPACT_PLACEHOLDER]
    assert len(placeholders) == 10 - KEEP_RECENT_EXECUTION_RESULTS
    assert len(cleared) == len(messages) and cleared[-1] is messages[-1]
    assert microcompact(messages[:4]) == messages[:4]

    model = ScriptedModel(["<analysis>scratch</analysis><summary>Printed 0 to 9.</summary>"])
    state = CompactionState(consecutive_failures=2)
    summarised = asyncio.run(full_compact(messages, model, state))
    assert summarised[0].role is MessageRole.USER and "Printed 0 to 9." in summarised[0].content
    assert "scratch" not in summarised[0].content
    assert summarised[-10:] == messages[-10:] and state.consecutive_failures == 0
    assert "Printed" in model.requests[0][1]["content"] or "print(0)" in str(model.requests[0])

    trimmed = trim_fallback([ExecutionResultMessage("orphan"), *messages[-5:]])
    assert trimmed[0].role is not MessageRole.EXECUTION_RESULT
    assert extract_summary("no tags") == "no tags"


def test_a_failing_summary_counts_and_then_stops_calling_the_model():
    messages = _turns(10)
    state = CompactionState()
    failing = ScriptedModel([RuntimeError("down")])
    out = asyncio.run(full_compact(messages, failing, state))
    assert state.consecutive_failures == 1 and len(out) < len(messages)
    state.consecutive_failures = MAX_CONSECUTIVE_FAILURES
    idle = ScriptedModel([])
    asyncio.run(full_compact(messages, idle, state))
    assert idle.requests == []


def test_thresholds_and_estimates_are_upstreams():
    assert compact_threshold(128_000) == 99_000 and compact_threshold(20_000) == 10_000
    assert estimate_tokens([UserMessage("x" * 40)]) == 10
    assert estimate_tokens([{"role": "user", "content": "x" * 40}], api_token_count=7) == 7


def test_compact_if_needed_summarises_cave_dicts_and_returns_dicts():
    system = {"role": "system", "content": "You are helpful."}
    history = [m.to_dict() for m in _turns(30, size=400)]
    model = ScriptedModel(["<summary>Thirty prints.</summary>"])
    out, tier = asyncio.run(
        compact_if_needed([system, *history], model, CompactionState(), context_window=1_000)
    )
    assert tier == "full_compact"
    assert out[0] is system and all(isinstance(m, dict) for m in out)
    assert "Thirty prints." in out[1]["content"] and out[-1] is history[-1]
    # Code replies and their results were read as such: the old results were cleared
    # (tier 1) before the summary, so only the code reached the summariser.
    transcript = model.requests[0][1]["content"]
    assert "[code_execution]: ```python\nprint(0)" in transcript and "out 0" not in transcript


def test_compact_if_needed_keeps_the_first_message_of_upstream_objects():
    messages = [SystemMessage("sys"), *_turns(12), AssistantMessage("done")]
    out, tier = asyncio.run(
        compact_if_needed(messages, ScriptedModel([]), CompactionState(), context_window=1_000)
    )
    assert tier == "microcompact" and out[0] is messages[0] and out[-1] is messages[-1]


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
