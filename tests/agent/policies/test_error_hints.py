"""ErrorHints: one-line hints after a failed cell."""

from cave_tui.agent.missing_library import module_hint
from cave_tui.agent.observation import FORMAT_MANY_HINT, error_hints
from cave_tui.runtime.base import ExecutionResult


def test_a_column_no_frame_has_gets_the_merge_that_would_bring_it():
    missing = ExecutionResult(
        success=False, error="KeyError: 'Column not found: airline'", error_type="KeyError"
    )
    frames = {
        "flights": {"carrier": "str", "dest": "str"},
        "airlines": {"carrier": "str", "name": "str"},
    }
    code = "flights.groupby('carrier')['airline'].size()"
    assert error_hints(code, missing, frames) == [
        "There is no column 'airline' in flights (its columns: carrier, dest). To use the "
        "columns of airlines (name), merge into a new frame first: "
        "merged = flights.merge(airlines, on='carrier'), then use merged['name']."
    ]
    # No frame shares a column with the one used: its columns are listed.
    assert error_hints("airlines['airline']", missing, {"airlines": {"carrier": "str"}}) == [
        "There is no column 'airline' in airlines; its columns: carrier."
    ]


def test_a_wide_frames_columns_past_the_summarized_dtypes_are_named_in_the_hint():
    import pandas as pd

    from cave_tui.agent.observation import frame_columns
    from cave_tui.runtime.shipped.summary import summarize

    wide = pd.DataFrame({f"feature_{i}": [i] for i in range(30)} | {"malignant": [1]})
    frames = frame_columns([summarize("cancer", wide)])
    missing = ExecutionResult(success=False, error="KeyError: 'malignat'", error_type="KeyError")
    (hint,) = error_hints("cancer['malignat'].mean()", missing, frames)
    assert "its columns: malignant, feature_0" in hint  # the 31st column, the closest first


def test_a_missing_key_subscripted_on_a_frame_is_a_column_not_a_row():
    missing = ExecutionResult(success=False, error="KeyError: 'airline'", error_type="KeyError")
    frames = {"merged": {"carrier": "str", "name": "str"}, "airports": {"faa": "str"}}
    assert error_hints("merged['airline'].value_counts()", missing, frames) == [
        "There is no column 'airline' in merged; its columns: carrier, name."
    ]
    assert error_hints("flights.merge(a, on='c')['airline']", missing, frames) == [
        "There is no column 'airline': the Namespace lists each frame's columns."
    ]
    # `.loc['HNL']` and a dict's key stay row / lookup hints.
    row = ExecutionResult(success=False, error="KeyError: 'HNL'", error_type="KeyError")
    assert "index label of airports" in error_hints("airports.loc['HNL']", row, frames)[0]
    assert "index label here" in error_hints("d['HNL']", row, frames)[0]


async def test_formatting_a_series_as_one_number_is_named(runtime):
    code = "ua = flights['dep_delay'] * 2\nf'{ua:.2f}'"
    result = await runtime.execute(code)
    assert error_hints(code, result, {}) == [FORMAT_MANY_HINT]


async def test_a_whole_series_reduction_where_one_per_group_was_meant_is_named(runtime):
    await runtime.execute(
        "import pandas as pd\ntrips = pd.DataFrame({'src': list('aab'), 'to': list('xxy')})"
    )
    code = "top = trips.groupby('src')['to'].value_counts().idxmax().to_dict()"
    result = await runtime.execute(code)
    frames = {"trips": {"src": "str", "to": "str"}}
    [hint] = error_hints(code, result, frames)
    assert "one value for the whole Series (a tuple of its index levels)" in hint
    per_group = "trips.groupby('src')['to'].agg(lambda s: s.value_counts().idxmax())"
    assert per_group in hint
    # The per-group form it names is right.
    assert (await runtime.execute(f"per = {per_group}.to_dict()")).success
    assert await runtime.retrieve("per") == {"a": "x", "b": "y"}
    # Another reduction, then a method its scalar lacks: the grouped form of that reduction.
    code = "top = trips.groupby('src')['to'].count().max().to_frame()"
    [hint] = error_hints(code, await runtime.execute(code), frames)
    assert "`.max()` gave one value" in hint and "trips.groupby('src')['to'].max()" in hint


async def test_an_attribute_error_without_a_reduction_gets_no_shape_hint(runtime):
    code = "word = 'abc'\nword.to_dict()"
    assert error_hints(code, await runtime.execute(code), {}) == []


async def test_a_column_both_merged_frames_have_is_named_with_its_suffixes(runtime):
    await runtime.execute(
        "import pandas as pd\n"
        "trips = pd.DataFrame({'op': ['u', 'd'], 'name': ['t1', 't2']})\n"
        "ops = pd.DataFrame({'op': ['u', 'd'], 'name': ['United', 'Delta']})"
    )
    frames = {"trips": {"op": "str", "name": "str"}, "ops": {"op": "str", "name": "str"}}
    for code in (
        "trips.merge(ops, on='op')[['name']].value_counts()",
        "trips.merge(ops, on='op').groupby('name').size()",
    ):
        [hint] = error_hints(code, await runtime.execute(code), frames)
        assert "'name_x' (from trips) and 'name_y' (from ops)" in hint
    # The suffix it names is there.
    assert (await runtime.execute("n = trips.merge(ops, on='op')['name_y'].tolist()")).success
    assert await runtime.retrieve("n") == ["United", "Delta"]
    # Only one side has the column: the merge hint as before.
    only = {"trips": {"op": "str"}, "ops": {"op": "str", "name": "str"}}
    code = "trips[['op']].merge(ops, on='op').groupby('nme').size()"
    [hint] = error_hints(code, await runtime.execute(code), only)
    assert "name_x" not in hint and "close names: name" in hint


async def test_columns_selected_with_a_tuple_get_the_list_form(runtime):
    """pandas < 2 code (`g['a', 'b']`): pandas 2 refuses it on a groupby, and on a frame the
    tuple is one missing key; the hint writes the selection with a list, which runs."""
    await runtime.execute(
        "import pandas as pd\n"
        "iris = pd.DataFrame({'species': ['a', 'b'], 'sw': [1.0, 2.0], 'pl': [3.0, 4.0]})"
    )
    frames = {"iris": {"species": "str", "sw": "float64", "pl": "float64"}}
    grouped = "means = iris.groupby('species')['sw', 'pl'].mean()"
    [hint] = error_hints(grouped, await runtime.execute(grouped), frames)
    fixed = "iris.groupby('species')[['sw', 'pl']]"
    assert hint.endswith(f"with a list in the brackets, {fixed}."), hint
    assert (await runtime.execute(f"means = {fixed}.mean()")).success
    framed = "both = iris['sw', 'pl']"
    [hint] = error_hints(framed, await runtime.execute(framed), frames)
    assert "select several columns with a list in the brackets, iris[['sw', 'pl']]." in hint
    # A row and a column in .loc is a tuple meant as one: the missing label's hint.
    missing = "x = iris.loc[0, 'nope']"
    [hint] = error_hints(missing, await runtime.execute(missing), frames)
    assert "list in the brackets" not in hint and "'nope' is not a column" in hint


async def test_unpacking_a_call_into_too_few_or_too_many_names_is_named(runtime):
    """`chi2, p = chi2_contingency(t)`: four values returned; the hint names the call, says
    to keep the result whole, and for SciPy names its result's parts, which exist."""
    code = (
        "from scipy.stats import chi2_contingency, ttest_ind\n"
        "chi2, p = chi2_contingency([[10, 20], [30, 40]])"
    )
    [hint] = error_hints(code, await runtime.execute(code), {})
    assert hint.startswith("`chi2_contingency(...)` returns more than the 2 values `(chi2, p)`")
    assert "result = chi2_contingency(...)" in hint and ".statistic and .pvalue" in hint
    kept = "result = chi2_contingency([[10, 20], [30, 40]])\nstat = result.statistic"
    assert (await runtime.execute(kept)).success
    few = "a, b, c = ttest_ind([1, 2, 3], [2, 3, 5])"
    [hint] = error_hints(few, await runtime.execute(few), {})
    assert "returns 2 values, and `(a, b, c)` takes 3" in hint, hint
    plain = "def pair():\n    return 1, 2, 3\nx, y = pair()"
    [hint] = error_hints(plain, await runtime.execute(plain), {})
    assert "`pair(...)` returns more than the 2 values" in hint and "SciPy" not in hint


async def test_a_filter_for_a_value_that_is_a_column_name_is_named(runtime):
    """`macro[macro['series'] == 'unemp']` on a frame with an `unemp` column: the data is
    that column; a value that is no column gets the missing column's hint, as before."""
    await runtime.execute(
        "import pandas as pd\nmacro = pd.DataFrame({'year': [1, 2], 'unemp': [5.0, 6.0]})"
    )
    frames = {"macro": {"year": "int64", "unemp": "float64"}}
    code = "u = macro[macro['series'] == 'unemp']"
    [hint] = error_hints(code, await runtime.execute(code), frames)
    assert hint == (
        "There is no column 'series' in macro, and 'unemp' is not a value to find in one: it "
        "is a column of macro itself. Use macro['unemp'] directly, with no filter on rows."
    )
    other = "u = macro[macro['series'] == 'jobs']"
    [hint] = error_hints(other, await runtime.execute(other), frames)
    assert "There is no column 'series' in macro; its columns: year, unemp." in hint, hint


async def test_a_position_taken_for_a_label_gets_iloc(runtime):
    """`best[0]` on a Series indexed by names: pandas 2 reads 0 as a label; the hint's
    `.iloc[0]` runs. A label lookup that fails otherwise is not this hint's."""
    await runtime.execute(
        "import pandas as pd\nbest = pd.Series({'YEAR': 1950, 'SUN': 80.5})\nrows = [1, 2]"
    )
    code = "decade = best[0]"
    [hint] = error_hints(code, await runtime.execute(code), {})
    assert hint == (
        "`best[0]` looks up the index label 0, which best does not have: pandas reads a "
        "number in brackets as a label. By position, write best.iloc[0]."
    )
    assert (await runtime.execute("decade = best.iloc[0]")).success
    last = "x = best[-1]"
    [hint] = error_hints(last, await runtime.execute(last), {})
    assert hint.endswith("write best.iloc[-1].")
    await runtime.execute("table = pd.DataFrame({'a': [1], 'b': [2]})")
    col = "first = table[0]"
    [hint] = error_hints(col, await runtime.execute(col), {"table": {"a": "int", "b": "int"}})
    assert hint.endswith("By position, the column is table.iloc[:, 0]."), hint
    assert (await runtime.execute("first = table.iloc[:, 0]")).success
    for other in ("x = best['NOPE']", "x = best.loc[0]", "x = {'a': 1}[3]"):
        hints = error_hints(other, await runtime.execute(other), {})
        assert not any("iloc" in h for h in hints), (other, hints)


async def test_a_module_the_kernel_lacks_is_said_to_be_out_of_reach(runtime):
    """A small model imports a library the kernel does not have, again and again: the hint
    says a cell cannot install it and names what to use instead. Other import errors (a
    name the module lacks) get no such hint."""
    code = "import cave_no_such_library.stats as st\nst.ttest(1, 2)"
    result = await runtime.execute(code)
    assert result.error_type == "ModuleNotFoundError"
    assert error_hints(code, result, {}) == [module_hint("cave_no_such_library")]
    assert "`cave_no_such_library` is not installed here" in module_hint("cave_no_such_library")
    code = "from json import no_such_name"
    assert error_hints(code, await runtime.execute(code), {}) == []


async def test_a_missing_statistics_library_gets_the_pandas_expression_instead(runtime):
    """The embedded model reached for scipy's pearsonr (not installed), then called it
    without the import: each failure names what computes it with pandas."""
    code = (
        "from cave_no_such_stats import pearsonr\n"
        "r, _ = pearsonr(flights['dep_delay'], flights['dep_delay'])"
    )
    [hint] = error_hints(code, await runtime.execute(code), {})
    assert "`cave_no_such_stats` is not installed here" in hint
    assert "Instead: pearsonr: x.corr(y), one number (no p-value to unpack)." in hint
    code = "r, _ = pearsonr(flights['dep_delay'], flights['dep_delay'])"
    [hint] = error_hints(code, await runtime.execute(code), {})
    assert hint == (
        "`pearsonr` is not defined: compute it without it. "
        "pearsonr: x.corr(y), one number (no p-value to unpack)."
    )
    # The expression it names is right, and another undefined name gets no such hint.
    assert (await runtime.execute("r = flights['dep_delay'].corr(flights['dep_delay'])")).success
    assert round(await runtime.retrieve("r"), 6) == 1.0
    code = "print(undefined_thing)"
    assert error_hints(code, await runtime.execute(code), {}) == []


def test_a_file_the_request_names_is_read_from_where_it_says():
    from cave_tui.agent.observation import FILE_HINT, requested_path

    request = "In /tmp/bench/cf-smoking.csv, what is the mean? Answer format: @mean[value]."
    error = "FileNotFoundError: [Errno 2] No such file or directory: 'tmp/bench/cf-smoking.csv'"
    missing = ExecutionResult(success=False, error=error, error_type="FileNotFoundError")
    code = "df = pd.read_csv('tmp/bench/cf-smoking.csv')"
    (hint,) = error_hints(code, missing, {}, request=request)
    assert hint == (
        "There is no file 'tmp/bench/cf-smoking.csv': the request gives it as "
        "'/tmp/bench/cf-smoking.csv'. Read it from exactly that path."
    )
    assert requested_path("data/cf-smoking.csv", request) == "/tmp/bench/cf-smoking.csv"
    assert requested_path("/tmp/bench/cf-smoking.csv", request) is None  # the same path
    assert requested_path("other.csv", request) is None
    # No file named in the request: "already loaded" only where a frame is loaded.
    assert error_hints(code, missing, {}) == []
    assert error_hints(code, missing, {"sales": {"a": "int"}}) == [FILE_HINT]


def test_a_cut_column_list_shows_the_columns_the_request_names_first():
    parts = ("radius", "texture", "perimeter", "area", "smoothness", "compactness",
             "concavity", "symmetry", "fractal", "points", "dimension", "error", "hue")  # fmt: skip
    cols = [f"{stat} {part}" for stat in ("mean", "worst") for part in parts]
    frames = {"data": dict.fromkeys([*cols, "malignant"], "float64")}
    missing = ExecutionResult(success=False, error="KeyError: 'diagnosis'", error_type="KeyError")
    request = "In cancer.csv (malignant is 1 for a malignant tumour), compare 'mean radius'."
    code = "data[data['diagnosis'] == 'M']"
    (hint,) = error_hints(code, missing, frames, request=request)
    assert "mean radius, malignant, mean texture," in hint, hint  # after the close ones
    (unasked,) = error_hints(code, missing, frames)
    assert "malignant" not in unasked  # the 27th of a list cut at 24
