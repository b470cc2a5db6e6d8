"""`paths.is_local_path`: which literal paths strict lets a reader open."""

from __future__ import annotations

import pytest

from cave_tui.security.paths import is_local_path, looks_like_path


@pytest.mark.parametrize("text", ["data.csv", "./data.csv", "data/x.parquet", "a\\b.csv", "t"])
def test_relative_paths_inside_the_directory_are_local(text):
    assert is_local_path(text)


@pytest.mark.parametrize(
    "text",
    ["/etc/passwd", "../x.csv", "a/../../b", "~/x", "~root", "C:x", "C:\\x", "\\\\srv\\s",
     "file:x", "https://h/x.csv", "s3://b/k", ".env", ".git/config", "x/.ssh/id", "",
     " data.csv", "a\x00b"],
)  # fmt: skip
def test_everything_else_is_not(text):
    assert not is_local_path(text)


def test_paths_urls_and_file_names_look_like_paths():
    assert all(map(looks_like_path, ["/etc/x", "~/x", "../x", "https://h", "out.png"]))
    assert not any(map(looks_like_path, ["km/h", "a/b", "north", "v1.2", "/"]))
