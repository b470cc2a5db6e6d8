"""The built wheel ships the bundled skills/ and themes/, and cave installed from it finds
them (not only a source checkout). Built offline, without build isolation."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.packaging

ROOT = Path(__file__).resolve().parents[2]
_FIND = """
import json, cave_tui
from cave_tui.skills import bundled_skills_dir, discover_skills
from cave_tui.frontends.tui.themes import BUNDLED, load_themes
skills = discover_skills(cwd=__import__("pathlib").Path.cwd(), include_user=False)
themes, problems = load_themes(BUNDLED)
print(json.dumps({
    "package": cave_tui.__file__,
    "skills_dir": str(bundled_skills_dir()),
    "skills": sorted(s.name for s in skills.skills),
    "themes_dir": str(BUNDLED),
    "themes": sorted(t.name for t in themes),
}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the checkout (links kept), so the build leaves the
    checkout as it was."""
    src = tmp_path_factory.mktemp("src")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for name in ("cave_tui", "skills", "themes"):
        shutil.copytree(ROOT / name, src / name, symlinks=True, ignore=ignore)
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", "--wheel-dir", str(out), str(src)],
        check=True, capture_output=True, timeout=120,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )  # fmt: skip
    (built,) = out.glob("cave_tui-*.whl")
    return built


def test_the_wheel_holds_the_bundled_skills_and_themes(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for skill in sorted(p.name for p in (ROOT / "skills").iterdir() if p.is_dir()):
        for file in sorted((ROOT / "skills" / skill).iterdir()):
            if file.suffix in {".md", ".py"}:
                assert f"cave_tui/skills/bundled/{skill}/{file.name}" in names
    for theme in sorted((ROOT / "themes").glob("*.toml")):
        assert f"cave_tui/themes/{theme.name}" in names


def test_cave_installed_from_the_wheel_finds_its_skills_and_themes(
    wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)  # what installing a pure-Python wheel does
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-c", _FIND],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    found = json.loads(done.stdout)
    assert Path(found["package"]).is_relative_to(site)
    assert Path(found["skills_dir"]).is_relative_to(site)
    assert found["skills"] == ["charts", "data-analysis"]
    assert Path(found["themes_dir"]).is_relative_to(site)
    assert {"cave-dark", "cave-light", "cave-high-contrast"} <= set(found["themes"])
