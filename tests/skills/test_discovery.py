"""Discovery and validation of SKILL.md files against the Agent Skills standard."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cave_tui import Skill as RootSkill
from cave_tui.skills import (
    Skill,
    SkillDiscovery,
    SkillError,
    SkillValidationError,
    bundled_skills_dir,
    discover_skills,
)
from tests.helpers.paths import REPO_ROOT
from tests.skills.conftest import write_skill

ROOT = REPO_ROOT


def test_root_package_exports_skill():
    assert RootSkill is Skill


def test_from_file_reads_metadata_only(make_skill):
    path = make_skill(
        "csv-tools",
        description="Read CSV files. Use when the user has CSV data.",
        extra=(
            "license: MIT\ncompatibility: Needs pandas\nallowed-tools: python bash\n"
            "metadata:\n  author: someone\n  version: 2\n"
        ),
        body="# CSV\nUse pandas.read_csv.",
    )
    skill = SkillDiscovery.from_file(path)
    assert skill.name == "csv-tools"
    assert skill.description == "Read CSV files. Use when the user has CSV data."
    assert skill.license == "MIT"
    assert skill.compatibility == "Needs pandas"
    assert skill.allowed_tools == ["python", "bash"]
    assert skill.metadata == {"author": "someone", "version": "2"}
    assert skill.path == path
    assert skill.body_content == "# CSV\nUse pandas.read_csv."
    # A folder works as well as its SKILL.md.
    assert SkillDiscovery.from_file(path.parent).name == "csv-tools"


def test_body_is_read_at_activation_time_not_discovery(make_skill):
    path = make_skill("notes", body="old body")
    skill = SkillDiscovery.from_file(path)
    path.write_text(path.read_text().replace("old body", "new body"))
    assert skill.body_content == "new body"


def test_triple_dash_inside_a_value_is_not_a_fence(make_skill):
    path = make_skill("dashes", description="Split on --- markers. Use for logs.")
    assert SkillDiscovery.from_file(path).description == "Split on --- markers. Use for logs."


BAD_CASES = [
    ("no-front", {"raw": "# Just markdown\n"}, "must start with YAML frontmatter"),
    ("unclosed", {"raw": "---\nname: unclosed\ndescription: x\n"}, "must start with YAML"),
    ("bad-yaml", {"raw": "---\nname: bad-yaml\ndescription: a: b\n---\nx"}, "Invalid YAML"),
    ("no-name", {"raw": "---\ndescription: x\n---\nbody"}, "Missing required field"),
    ("no-desc", {"raw": "---\nname: no-desc\n---\nbody"}, "description"),
    ("a" * 65, {}, "exceeds 64 character limit"),
    ("Upper", {}, "must be lowercase"),
    ("under_score", {}, "invalid characters"),
    ("-lead", {}, "cannot start or end with a hyphen"),
    ("double--dash", {}, "consecutive hyphens"),
    ("long-desc", {"description": "x" * 1025}, "exceeds 1024 character limit"),
    ("empty-desc", {"description": "''"}, "non-empty"),
    ("extra-field", {"extra": "version: 1\n"}, "Unexpected fields in frontmatter: version"),
    ("long-compat", {"extra": f"compatibility: {'c' * 501}\n"}, "Compatibility exceeds 500"),
]


@pytest.mark.parametrize(("folder", "kwargs", "expected"), BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_invalid_skill_gives_a_clear_error_naming_the_file(make_skill, folder, kwargs, expected):
    path = make_skill(folder, **kwargs)
    with pytest.raises(SkillValidationError) as info:
        SkillDiscovery.from_file(path)
    message = str(info.value)
    assert str(path) in message
    assert expected in message
    assert info.value.path == path


def test_missing_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(SkillValidationError, match="nope: Skill file not found"):
        SkillDiscovery.from_file(tmp_path / "nope")


def test_from_directory_finds_subfolders_sorted(make_skill, tmp_path):
    make_skill("zeta")
    make_skill("alpha")
    (tmp_path / "skills" / "not-a-skill").mkdir()
    skills = SkillDiscovery.from_directory(tmp_path / "skills")
    assert [s.name for s in skills] == ["alpha", "zeta"]


def test_from_directory_reports_every_bad_skill(make_skill, tmp_path):
    make_skill("good")
    bad1 = make_skill("Bad1")
    bad2 = make_skill("bad2", description="y" * 2000)
    with pytest.raises(SkillError) as info:
        SkillDiscovery.from_directory(tmp_path / "skills")
    assert "2 invalid skills" in str(info.value)
    assert str(bad1) in str(info.value) and str(bad2) in str(info.value)


def test_from_directory_missing_folder(tmp_path):
    with pytest.raises(SkillError, match="Skills directory not found"):
        SkillDiscovery.from_directory(tmp_path / "absent")
    assert SkillDiscovery.Error is SkillError


def test_skill_built_in_code_is_validated():
    with pytest.raises(SkillValidationError, match=r"skill defined in code.*lowercase"):
        Skill(name="Bad", description="x")
    with pytest.raises(TypeError, match="Function, Variable or Type"):
        Skill(name="ok", description="x", functions=[len])  # type: ignore[list-item]
    skill = Skill(name="in-code", description="Made in code.", body_content="Do X.")
    assert skill.body_content == "Do X." and skill.path is None


def test_discover_skills_precedence_and_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    user = tmp_path / "config" / "cave" / "skills"
    project = tmp_path / "work"
    extra = tmp_path / "extra"
    write_skill(user, "shared", description="user copy")
    write_skill(user, "user-only", description="only in the user dir")
    write_skill(project / "skills", "shared", description="project copy")
    write_skill(project / "skills", "Broken-Name")
    write_skill(extra, "extra-skill", description="from --skills")
    result = discover_skills([extra, tmp_path / "missing"], cwd=project, include_bundled=False)
    by_name = {s.name: s for s in result.skills}
    assert set(by_name) == {"extra-skill", "shared", "user-only"}
    assert by_name["shared"].description == "project copy"  # ./skills beats the user dir
    assert result.shadowed == [user / "shared" / "SKILL.md"]
    messages = [str(e) for e in result.errors]
    assert any("Broken-Name/SKILL.md" in m and "lowercase" in m for m in messages)
    assert any(str(tmp_path / "missing") in m and "not found" in m for m in messages)


def test_bundled_skills_are_valid():
    bundled = bundled_skills_dir()
    assert bundled == ROOT / "skills"
    names = [s.name for s in SkillDiscovery.from_directory(bundled)]
    assert {"data-analysis", "charts"} <= set(names)
    result = discover_skills(cwd=ROOT / "tests", include_user=False)
    assert {"data-analysis", "charts"} <= {s.name for s in result.skills}


def test_import_is_light_and_discovery_runs_no_injection():
    code = (
        "import sys\nfrom cave_tui.skills import SkillDiscovery, Skill\n"
        "assert 'strictyaml' not in sys.modules and 'IPython' not in sys.modules\n"
        "skills = SkillDiscovery.from_directory('skills')\n"
        "assert not any(m.startswith('cave_skill_') for m in sys.modules)\n"
        "assert 'pandas' not in sys.modules, 'discovery imported an injection module'\n"
        "assert not any(s.exports_loaded for s in skills)\n"
        "print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
