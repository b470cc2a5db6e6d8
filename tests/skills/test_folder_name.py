"""A skill whose folder is not named like it loads with a warning (upstream CaveAgent loads
it; the Agent Skills standard's rule stays a warning, never a refusal)."""

from __future__ import annotations

import pytest

from cave_tui.skills import SkillDiscovery
from cave_tui.skills.errors import SkillFolderNameWarning, SkillValidationError
from tests.skills.conftest import write_skill


def test_a_folder_named_otherwise_loads_with_a_warning(tmp_path) -> None:
    path = write_skill(tmp_path, "helpers", name="data-helpers")
    with pytest.warns(SkillFolderNameWarning, match="'helpers' is not named like its skill"):
        skill = SkillDiscovery.from_file(path)
    assert skill.name == "data-helpers" and skill.path == path
    with pytest.warns(SkillFolderNameWarning):
        (found,) = SkillDiscovery.from_directory(tmp_path)
    assert found.name == "data-helpers"


def test_a_matching_folder_warns_nothing_and_other_rules_still_refuse(tmp_path, recwarn) -> None:
    SkillDiscovery.from_file(write_skill(tmp_path, "tidy"))
    assert not [w for w in recwarn if issubclass(w.category, SkillFolderNameWarning)]
    with pytest.raises(SkillValidationError, match=r"invalid characters|lowercase"):
        SkillDiscovery.from_file(write_skill(tmp_path, "bad", name="Bad_Name"))
