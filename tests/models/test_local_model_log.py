"""The embedded model's log (issue 30): in the session or data folder, never /tmp, and never
written or read through a symbolic link planted where it goes."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from cave_tui.models.local import LocalServer, LocalServerError, Weights

WEIGHTS = Weights(Path("/nonexistent/model.gguf"), "t")


def test_the_default_log_is_in_caves_data_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("CAVE_DATA_DIR", str(tmp_path / "data"))
    server = LocalServer(WEIGHTS)
    assert server.log_path == tmp_path / "data" / "local-model.log"
    monkeypatch.delenv("CAVE_DATA_DIR")
    assert not LocalServer(WEIGHTS).log_path.is_relative_to(tempfile.gettempdir())


async def test_a_planted_symlink_is_refused_and_its_target_untouched(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    log = tmp_path / "local-model.log"
    log.symlink_to(victim)
    server = LocalServer(WEIGHTS, log_path=log)
    with pytest.raises(LocalServerError, match="symbolic link"):
        await server.start()
    assert server.process is None  # nothing started
    assert victim.read_text() == "precious\n"
    assert log.is_symlink()


def test_the_log_tail_is_not_read_through_a_symlink(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("the host's secret\n")
    log = tmp_path / "local-model.log"
    log.symlink_to(secret)
    assert LocalServer(WEIGHTS, log_path=log).log_tail() == ""
    log.unlink()
    log.write_text("line one\nline two\n")
    assert LocalServer(WEIGHTS, log_path=log).log_tail().endswith("line one\nline two")
