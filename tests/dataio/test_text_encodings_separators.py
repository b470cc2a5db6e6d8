"""Issue 31, item 6: text files as spreadsheets write them. A cp1252 CSV reads as cp1252 (not
a Central-European or Mac code page), a UTF-16 file with a byte-order mark (Excel's
"Unicode text") reads, a named encoding is never refused as binary, a `;`-separated file
with decimal commas is split and its numbers read; the notice says what was chosen and how
to choose otherwise, and the notebook export reads the file the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from cave_tui.dataio import DataIOError, inject_spec, load_file, parse_inject_spec
from cave_tui.runtime import IPythonRuntime
from cave_tui.session.setup_code import setup_code

# The file: Italian, German and Portuguese letters and the euro sign, all in cp1252
# (saved by Excel on Windows as "CSV").
WESTERN = "città,price €,note\nZürich,12.5,Grüße\nSão Paulo,7.0,ação\nMünchen,3.2,à bientôt\n"
CITIES = ["Zürich", "São Paulo", "München"]
NOTES = ["Grüße", "ação", "à bientôt"]


def _exported(name: str, source: dict[str, Any]) -> Any:
    """What the notebook export's setup cell binds to *name*."""
    namespace: dict[str, Any] = {}
    exec(setup_code({"type": "injection", "name": name, "source": source})[1], namespace)
    return namespace[name]


async def test_a_cp1252_csv_reads_as_cp1252_and_the_export_keeps_it(tmp_path: Path):
    path = tmp_path / "prices.csv"
    path.write_bytes(WESTERN.encode("cp1252"))
    runtime = IPythonRuntime()
    injection = await inject_spec(runtime, str(path))
    df = injection.value
    assert list(df.columns) == ["città", "price €", "note"]
    assert df["città"].tolist() == CITIES and df["note"].tolist() == NOTES
    assert df["price €"].tolist() == [12.5, 7.0, 3.2]
    assert injection.source["encoding"] == "cp1252"
    assert "read as cp1252 (guessed; :encoding=NAME to choose)" in injection.summary()
    assert "separated by" not in injection.summary()  # commas: nothing to say
    pd.testing.assert_frame_equal(_exported("prices", injection.source), df)


def test_other_scripts_keep_their_code_pages(tmp_path: Path):
    samples = {
        "cp1251": "имя,город\nИван,Москва\nПётр,Санкт-Петербург\n",
        "cp1250": "imię,miasto\nŁukasz Wójcik,Łódź\nZażółć gęślą jaźń,Gdańsk\n",
        "cp1253": "όνομα,πόλη\nΓιάννης,Αθήνα\nΜαρία,Θεσσαλονίκη\n",
    }
    for encoding, text in samples.items():
        path = tmp_path / f"{encoding}.csv"
        path.write_bytes(text.encode(encoding))
        loaded = load_file(path)
        assert loaded.encoding == encoding, text
        assert loaded.value.iloc[1].tolist() == text.splitlines()[2].split(",")


@pytest.mark.parametrize("sep", ["\t", ","], ids=["tab", "comma"])
async def test_utf16_with_a_byte_order_mark_reads_found_or_named(tmp_path: Path, sep: str):
    path = tmp_path / "unicode.csv"
    path.write_bytes(WESTERN.replace(",", sep).encode("utf-16"))  # BOM, little-endian
    assert path.read_bytes()[:2] == b"\xff\xfe"
    runtime = IPythonRuntime()
    found = await inject_spec(runtime, str(path))
    named = await inject_spec(runtime, f"{path}:named:encoding=utf-16")
    for injection in (found, named):
        df = injection.value
        assert df.shape == (3, 3) and df.columns[0] == "città"
        assert df["città"].tolist() == CITIES and df["note"].tolist() == NOTES
        assert df["price €"].tolist() == [12.5, 7.0, 3.2]
        assert injection.source["encoding"] == "utf-16"
        pd.testing.assert_frame_equal(_exported(injection.name, injection.source), df)
    tab_note = ", separated by tab (sniffed; :sep=, to choose)" if sep == "\t" else ""
    assert found.description.endswith(
        f"read as utf-16 (guessed; :encoding=NAME to choose){tab_note}"
    )
    assert named.description.endswith(f"read as utf-16{tab_note}")  # named: nothing guessed


def test_a_named_encoding_is_not_refused_as_binary(tmp_path: Path):
    path = tmp_path / "nobom.csv"
    path.write_bytes(WESTERN.encode("utf-16-le"))  # NUL bytes and no mark
    with pytest.raises(DataIOError, match="look like binary"):
        load_file(path)  # nothing says it is text: refused, with a reason
    loaded = load_file(path, encoding="utf-16-le")
    assert loaded.value["città"].tolist() == CITIES and loaded.value.shape == (3, 3)


async def test_semicolons_and_decimal_commas_are_sniffed(tmp_path: Path):
    path = tmp_path / "eu.csv"
    path.write_bytes(
        "Stadt;Preis;Menge\nZürich;12,5;3\nSão Paulo;1.234,75;4\nMünchen;7,25;5\n".encode("cp1252")
    )
    runtime = IPythonRuntime()
    injection = await inject_spec(runtime, str(path))
    df = injection.value
    assert list(df.columns) == ["Stadt", "Preis", "Menge"]
    assert df["Stadt"].tolist() == CITIES
    assert df["Preis"].tolist() == [12.5, 1234.75, 7.25] and df["Menge"].tolist() == [3, 4, 5]
    assert injection.description.endswith(
        "read as cp1252 (guessed; :encoding=NAME to choose), separated by ';' "
        "(sniffed; :sep=, to choose), with decimal commas and '.' thousands"
    )
    pd.testing.assert_frame_equal(_exported("eu", injection.source), df)


async def test_a_named_separator_wins(tmp_path: Path):
    path = tmp_path / "pipes.csv"
    path.write_text("a|b|c;d\n1|2|3;4\n5|6|7;8\n", encoding="utf-8")
    assert parse_inject_spec(f"{path}:t:sep=|").sep == "|"
    assert parse_inject_spec(f"{path}:encoding=latin-1:sep=';'").sep == ";"
    assert parse_inject_spec(f"{path}:t:sep=tab:encoding=utf-8").sep == "\t"
    with pytest.raises(DataIOError, match="must be one character"):
        parse_inject_spec(f"{path}:sep=;;")
    runtime = IPythonRuntime()
    sniffed = await inject_spec(runtime, f"{path}:s")
    assert list(sniffed.value.columns) == ["a", "b", "c;d"]  # the split with most fields
    assert sniffed.description.endswith("separated by '|' (sniffed; :sep=, to choose)")
    named = await inject_spec(runtime, f"{path}:t:sep=;")
    assert list(named.value.columns) == ["a|b|c", "d"] and named.value["d"].tolist() == [4, 8]
    assert named.description.endswith("separated by ';'")  # named: nothing sniffed
    assert named.source["sep"] == ";"
    pd.testing.assert_frame_equal(_exported("t", named.source), named.value)


def test_json_lines_in_utf16(tmp_path: Path):
    path = tmp_path / "cities.jsonl"
    path.write_bytes("".join(f'{{"city": "{c}"}}\n' for c in CITIES).encode("utf-16"))
    loaded = load_file(path)
    assert loaded.encoding == "utf-16" and loaded.value["city"].tolist() == CITIES


async def test_the_separator_is_recorded_and_replayed(tmp_path: Path):
    from cave_tui.session import SessionRecorder, read_session, replay_session
    from tests.session.helpers import code, scripted_agent

    path = tmp_path / "pipes.csv"  # sniffing would split it on '|'
    path.write_text("a|b|c;d\n1|2|3;4\n5|6|7;8\n", encoding="utf-8")
    agent = scripted_agent([code("print(t.d.sum())"), "12"])
    recorder = SessionRecorder.create(tmp_path / "s", agent=agent)
    injection = await inject_spec(agent.runtime, f"{path}:t:sep=;")
    recorder.record_injection(injection)
    await recorder.run("total?")
    await recorder.close()
    (record,) = [r for r in read_session(recorder.dir).records if r["type"] == "injection"]
    assert record["source"]["sep"] == ";"
    result = await replay_session(recorder.dir, pause=0)
    assert result.ok, result.report()


def test_a_named_encoding_that_does_not_fit_says_so(tmp_path: Path):
    path = tmp_path / "image.csv"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xd8\x00")
    with pytest.raises(DataIOError, match=r"look like binary .* do not decode as utf-8;"):
        load_file(path, encoding="utf-8")
