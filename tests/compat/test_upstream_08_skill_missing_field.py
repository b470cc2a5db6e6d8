"""A SKILL.md without `name` or `description` is refused with upstream's wording (0.7 and
0.8 both say "Missing required field 'name'"), which callers match, and the file named."""

from __future__ import annotations

from pathlib import Path

import pytest

from cave_tui.skills import SkillDiscovery


@pytest.mark.parametrize(
    ("front", "field"), [("description: no name", "name"), ("name: tidy", "description")]
)
def test_a_missing_field_is_named_as_upstream_names_it(
    tmp_path: Path, front: str, field: str
) -> None:
    path = tmp_path / "tidy" / "SKILL.md"
    path.parent.mkdir()
    path.write_text(f"---\n{front}\n---\nbody\n", encoding="utf-8")
    with pytest.raises(SkillDiscovery.Error) as caught:
        SkillDiscovery.from_file(path)
    assert f"Missing required field '{field}'" in str(caught.value)
    assert str(path) in str(caught.value)
