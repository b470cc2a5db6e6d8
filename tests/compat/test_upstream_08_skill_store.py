"""`SkillRegistry.build_skill_store()` for both generations: 0.8 reads `{name: body}`,
0.7 reads `{name: {"body_content": body, "exports": {...}}}`; one store serves both, and a
skill's `injection.py` is imported only when its exports are read."""

from pathlib import Path

from cave_tui import Function, Skill, SkillDiscovery, SkillRegistry


def helper(x: int) -> int:
    return x * 2


def test_an_08_caller_reads_each_skill_as_its_body() -> None:
    registry = SkillRegistry()
    registry.add_skills([Skill("a", "A", "A body"), Skill("b", "B", "B body")])
    store = registry.build_skill_store()
    assert store == {"a": "A body", "b": "B body"}
    assert store["a"].upper() == "A BODY" and store["a"][:1] == "A"


def test_a_07_caller_reads_the_body_and_the_exports_by_key() -> None:
    registry = SkillRegistry()
    registry.add_skill(Skill("t", "T", "Use helper.", functions=[Function(helper)]))
    entry = registry.build_skill_store()["t"]
    assert entry["body_content"] == "Use helper." and entry["exports"]["helper"](5) == 10
    assert entry == {"body_content": "Use helper.", "exports": {"helper": helper}}


def test_the_store_imports_no_injection_until_its_exports_are_read(tmp_path: Path) -> None:
    folder = tmp_path / "lazy"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: lazy\ndescription: Lazy.\n---\nBody.\n")
    marker = tmp_path / "imported"
    (folder / "injection.py").write_text(
        f"from pathlib import Path\nfrom cave_tui import Function\nPath({str(marker)!r}).touch()\n"
        "def helper():\n    return 1\n__exports__ = [Function(helper)]\n"
    )
    registry = SkillRegistry()
    registry.add_skill(SkillDiscovery.from_file(folder / "SKILL.md"))
    entry = registry.build_skill_store()["lazy"]
    assert entry == "Body." and not marker.exists()
    assert "helper" in entry["exports"] and marker.exists()
