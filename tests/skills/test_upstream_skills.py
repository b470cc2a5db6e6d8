"""Skills as upstream's README and API use them: Skill(...), SkillDiscovery, SkillRegistry."""

from __future__ import annotations

import pytest

from cave_tui.runtime import Function, Type, Variable
from cave_tui.skills import Skill, SkillDiscovery, SkillRegistry

INJECTION = '''
from cave_tui.runtime import Function, Variable, Type

def helper(x):
    """Double x."""
    return x * 2

class Result:
    pass

CONFIG = {"k": 1}

__exports__ = [Function(helper), Variable("CONFIG", CONFIG, "settings"), Type(Result)]
'''


def helper(x: int) -> int:
    return x + 1


class Point:
    pass


def test_skill_built_in_code_keeps_its_functions_variables_and_types():
    skill = Skill(
        name="my-skill",
        description="Does something useful",
        body_content="# Instructions\nFollow these steps...",
        functions=[Function(helper)],
        variables=[Variable("config", value={})],
        types=[Type(Point)],
    )
    assert skill.body_content == "# Instructions\nFollow these steps..."
    assert [f.name for f in skill.functions] == ["helper"]
    assert [v.name for v in skill.variables] == ["config"]
    assert [t.name for t in skill.types] == ["Point"]


def test_skill_without_injections_has_empty_lists_and_positional_arguments_work():
    bare = Skill("bare", "Nothing injected")
    assert (bare.functions, bare.variables, bare.types, bare.body_content) == ([], [], [], "")
    positional = Skill("pos", "Positional", "body", [Function(helper)], [], [Type(Point)])
    assert [f.name for f in positional.functions] == ["helper"]
    assert [t.name for t in positional.types] == ["Point"]


def test_discovered_skill_exposes_injection_exports(make_skill):
    path = make_skill("data-tools", injection=INJECTION)
    skill = SkillDiscovery.from_file(path)
    assert [f.name for f in skill.functions] == ["helper"]
    assert [v.name for v in skill.variables] == ["CONFIG"]
    assert [t.name for t in skill.types] == ["Result"]
    assert skill.functions[0].func(4) == 8


def test_discovery_errors_are_skill_discovery_error(make_skill, tmp_path):
    with pytest.raises(SkillDiscovery.Error):
        SkillDiscovery.from_file(tmp_path / "missing" / "SKILL.md")
    with pytest.raises(SkillDiscovery.Error):
        SkillDiscovery.from_directory(tmp_path / "nowhere")
    with pytest.raises(SkillDiscovery.Error):
        SkillDiscovery.from_file(make_skill("no-front", raw="just text"))
    broken = SkillDiscovery.from_file(make_skill("broken", injection="x = 1\n"))
    with pytest.raises(SkillDiscovery.Error, match="__exports__"):
        broken.functions  # noqa: B018 (injection.py is imported when its exports are read)


def test_from_directory_finds_root_and_subfolder_skills(tmp_path):
    from tests.skills.conftest import write_skill

    root = tmp_path / "root-skill"
    write_skill(tmp_path, "root-skill")
    write_skill(root, "sub-skill")
    names = sorted(s.name for s in SkillDiscovery.from_directory(root))
    assert names == ["root-skill", "sub-skill"]


def test_registry_stores_lists_and_describes():
    registry = SkillRegistry()
    assert registry.describe_skills() == "No skills available"
    assert registry.get_skill("a") is None
    a = Skill("a", "First skill", "Do A.")
    b = Skill("b", "Second skill", "Do B.", functions=[Function(helper)])
    registry.add_skill(a)
    registry.add_skills([b])
    assert registry.get_skill("a") is a
    assert registry.list_skills() == [a, b]
    assert registry.describe_skills() == "- a: First skill\n- b: Second skill"
    replacement = Skill("a", "Replaced")
    registry.add_skill(replacement)
    assert registry.get_skill("a") is replacement and len(registry.list_skills()) == 2


def test_registry_builds_the_skill_store():
    registry = SkillRegistry()
    registry.add_skill(
        Skill(
            "tools",
            "Tools",
            "Use helper.",
            functions=[Function(helper)],
            variables=[Variable("LIMIT", 3)],
            types=[Type(Point)],
        )
    )
    store = registry.build_skill_store()
    assert store == {
        "tools": {
            "body_content": "Use helper.",
            "exports": {"helper": helper, "LIMIT": 3, "Point": Point},
        }
    }


def test_registry_skills_go_to_the_agent():
    from cave_tui import CaveAgent
    from cave_tui.models import ScriptedModel
    from cave_tui.runtime import IPythonRuntime

    registry = SkillRegistry()
    registry.add_skill(Skill("tools", "Tools for tests", "Use helper."))
    agent = CaveAgent(ScriptedModel([]), runtime=IPythonRuntime(), skills=registry.list_skills())
    assert "tools" in agent.system_prompt()
