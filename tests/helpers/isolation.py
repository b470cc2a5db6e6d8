"""Each test of the app layer and the front ends gets its own config and data folders."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own config and data directory (and no CAVE_* from the host, but
    the in-process runtime unless it asks for the kernel: see tests/conftest.py)."""
    names = ("MODEL", "API_BASE", "POLICY", "THEME", "SKILLS", "APPROVE", "CELL_TIMEOUT")
    for name in (*names, "MEMORY_LIMIT"):
        monkeypatch.delenv(f"CAVE_{name}", raising=False)
    monkeypatch.setenv("CAVE_KERNEL", "0")
    monkeypatch.delenv("CAVE_CONFIG", raising=False)
    monkeypatch.setenv("CAVE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CAVE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    return tmp_path
