"""The bundled skills (`skills/data-analysis`, `skills/charts`) on real data."""

from __future__ import annotations

import palmerpenguins
import pandas as pd
import pytest

from cave_tui import CaveAgent
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime, Variable
from cave_tui.skills import SkillDiscovery
from tests.helpers.paths import REPO_ROOT

SKILLS = REPO_ROOT / "skills"


@pytest.fixture(scope="module")
def penguins() -> pd.DataFrame:
    return palmerpenguins.load_penguins()


@pytest.fixture(scope="module")
def eda():
    skill = SkillDiscovery.from_file(SKILLS / "data-analysis")
    return {item.name: item.value for item in skill.load_exports()}


@pytest.fixture(scope="module")
def charts():
    skill = SkillDiscovery.from_file(SKILLS / "charts")
    return {item.name: item.value for item in skill.load_exports()}


def test_data_analysis_exports(eda):
    assert set(eda) == {
        "eda_report",
        "profile",
        "missing_report",
        "top_correlations",
        "outliers",
        "group_summary",
        "find_issues",
        "Finding",
        "EDA_THRESHOLDS",
    }


def test_profile_and_missing_report(eda, penguins):
    prof = eda["profile"](penguins)
    assert list(prof.index) == list(penguins.columns)
    assert prof.loc["sex", "missing_pct"] == pytest.approx(100 * 11 / 344, abs=0.01)
    assert prof.loc["species", "distinct"] == 3
    assert prof.loc["body_mass_g", "max"] == 6300.0
    assert prof.loc["body_mass_g", "median"] == 4050.0
    missing = eda["missing_report"](penguins)
    assert missing.index[0] == "sex" and int(missing.loc["sex", "missing"]) == 11
    assert "species" not in missing.index


def test_correlations_groups_outliers(eda, penguins):
    top = eda["top_correlations"](penguins, n=3)
    assert {top.loc[0, "a"], top.loc[0, "b"]} == {"flipper_length_mm", "body_mass_g"}
    assert top.loc[0, "r"] == pytest.approx(0.871, abs=0.001)
    groups = eda["group_summary"](penguins, "species", "body_mass_g")
    assert groups.index[0] == "Gentoo"
    assert groups.loc["Gentoo", "mean"] == pytest.approx(5076.016, abs=0.01)
    assert groups.loc["Adelie", "count"] == 151
    frame = pd.DataFrame({"v": [10, 11, 12, 10, 11, 12, 10, 11, 100, -50]})
    out = eda["outliers"](frame, "v")
    assert sorted(out["v"]) == [-50, 100]
    with pytest.raises(KeyError, match="no column 'w'"):
        eda["outliers"](frame, "w")


def test_find_issues_and_report(eda, penguins):
    frame = penguins.assign(
        row_id=range(len(penguins)),
        constant=1,
        mostly_missing=[None] * 300 + [1.0] * 44,
    )
    kinds = {(f.kind, tuple(f.columns)) for f in eda["find_issues"](frame)}
    assert ("correlation", ("flipper_length_mm", "body_mass_g")) in kinds
    assert ("identifier", ("row_id",)) in kinds
    assert ("constant", ("constant",)) in kinds
    assert ("missing", ("mostly_missing",)) in kinds
    eda["EDA_THRESHOLDS"]["strong_correlation"] = 0.99
    try:
        kinds = {f.kind for f in eda["find_issues"](penguins)}
        assert "correlation" not in kinds  # the editable threshold is honoured
    finally:
        eda["EDA_THRESHOLDS"]["strong_correlation"] = 0.7
    report = eda["eda_report"](penguins, "penguins")
    assert report.startswith("penguins: 344 rows x 8 columns (5 numeric, 3 other)")
    assert "[correlation] flipper_length_mm, body_mass_g: r = +0.871" in report
    assert "Missing cells: 19 of 2,752." in report


def test_bar_chart_draws_proportional_labelled_bars(charts, penguins):
    chart = charts["bar_chart"](
        penguins, "species", "body_mass_g", agg="mean", title="Mean body mass (g)"
    )
    lines = str(chart).splitlines()
    assert lines[0] == "Mean body mass (g)"
    assert lines[1].startswith("   Gentoo │" + "█" * 40 + " 5,076")
    assert len(lines) == 4
    bars = {line.split("│")[0].strip(): line.split("│")[1] for line in lines[1:]}
    adelie = bars["Adelie"].split(" ")[0]
    # 3700.7 / 5076.0 of 40 cells = 29.16 cells: 29 full blocks and a one-eighth block.
    assert adelie == "█" * 29 + "▏"
    assert repr(chart) == str(chart)  # a bare call at the end of a cell shows the chart
    with pytest.raises(ValueError, match="repeated labels; pass agg="):
        charts["bar_chart"](penguins, "species", "body_mass_g")
    counts = charts["bar_chart"](penguins["island"].value_counts(), ascii=True, width=20)
    assert str(counts).splitlines()[0] == "   Biscoe |" + "#" * 20 + " 168"
    assert all(ord(c) < 128 for c in str(counts))


def test_bar_chart_top_missing_and_negative(charts):
    chart = str(charts["bar_chart"]({"a": 5, "b": -10, "c": None}, width=10))
    lines = chart.splitlines()
    assert lines[0] == "a │█████ 5"  # largest first; bars scale to the largest magnitude
    assert lines[1] == "b │░░░░░░░░░░ -10"
    assert lines[2] == "(1 missing values skipped; negative values drawn with ░)"
    top = str(charts["bar_chart"](pd.Series({"x": 3, "y": 2, "z": 1}), top=2, ascii=True))
    assert top.splitlines() == [
        "x |" + "#" * 40 + " 3",
        "y |" + "#" * 27 + " 2",
        "(1 more not shown, top=2)",
    ]


def test_histogram_and_sparkline(charts, penguins):
    chart = str(charts["histogram"](penguins["flipper_length_mm"], bins=8))
    lines = chart.splitlines()
    counts = [int(line.rsplit(" ", 1)[1]) for line in lines[:-1]]
    assert sum(counts) == 342 and len(counts) == 8
    assert lines[-1] == "n = 342; 2 missing values skipped"
    spark = str(charts["sparkline"]([1, 2, None, 8]))
    assert spark == "▁▂ █  min 1 max 8"
    assert str(charts["sparkline"]([])) == "(no numeric values to draw)"


async def test_agent_activates_both_bundled_skills_on_real_data(penguins):
    skills = SkillDiscovery.from_directory(SKILLS)
    runtime = IPythonRuntime(variables=[Variable("penguins", penguins, "Palmer penguins")])
    model = ScriptedModel(
        [
            "```python\nactivate_skill('data-analysis')\nactivate_skill('charts')\n```",
            "```python\nprint(eda_report(penguins, 'penguins'))\n"
            "bar_chart(penguins, 'species', 'body_mass_g', agg='mean')\n```",
            "Gentoo penguins are the heaviest (5,076 g on average).",
        ]
    )
    agent = CaveAgent(model, runtime=runtime, skills=skills)
    response = await agent.run("Explore penguins and chart body mass by species")
    assert response.completed
    activation = model.requests[1][-1]["content"]
    assert "=== Skill 'data-analysis' instructions (in full) ===" in activation
    assert "=== Skill 'charts' instructions (in full) ===" in activation
    namespace = activation.split("Namespace (live):", 1)[1]
    assert "- eda_report(df" in namespace and "# Start here: a one-page text EDA" in namespace
    assert "- bar_chart(data" in namespace and "- Finding: dataclass fields: kind: str" in namespace
    result = model.requests[2][-1]["content"]
    assert "penguins: 344 rows x 8 columns" in result
    assert "Gentoo │" + "█" * 40 in result
