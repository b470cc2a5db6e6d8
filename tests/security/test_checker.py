"""SecurityChecker API, rules and policies, one behaviour per test."""

from __future__ import annotations

import ast

import pytest

from cave_tui.security import (
    AttributeRule,
    FunctionRule,
    ImportRule,
    RegexRule,
    SecurityChecker,
    SecurityError,
    SecurityRule,
    SecurityViolation,
)


@pytest.fixture(scope="module")
def strict() -> SecurityChecker:
    return SecurityChecker.for_policy("strict")


@pytest.fixture(scope="module")
def standard() -> SecurityChecker:
    return SecurityChecker.for_policy("standard")


def rules_of(violations: list[SecurityViolation]) -> set[str]:
    return {v.rule for v in violations}


# -- upstream-compatible API ------------------------------------------------------------------
def test_upstream_rules_and_checker():
    checker = SecurityChecker(
        [
            ImportRule({"os", "subprocess", "sys"}),
            FunctionRule({"eval", "exec", "open"}),
            AttributeRule({"__globals__", "__builtins__"}),
            RegexRule(r"rm\s+-rf", "deletes files"),
        ]
    )
    code = 'import json\nx = 1\n  \nimport os\nf.__globals__\nopen("x")\ncmd = "rm -rf /"\n'
    violations = checker.check(code)
    by_rule = {v.rule: v for v in violations}
    assert set(by_rule) == {"ImportRule", "FunctionRule", "AttributeRule", "RegexRule"}
    assert by_rule["ImportRule"].lineno == 4
    assert by_rule["AttributeRule"].lineno == 5 and by_rule["AttributeRule"].col == 3
    assert by_rule["FunctionRule"].message == "call of function 'open' is not allowed"
    assert by_rule["RegexRule"].lineno == 7
    assert checker.check("import json\nprint(json.dumps([1]))") == []
    assert checker.check_code("import os") == checker.check("import os")


def test_violation_str_names_rule_line_and_column():
    violations = SecurityChecker([ImportRule({"os"})]).check("x = 1\nif x:\n    import os\n")
    assert [str(v) for v in violations] == [
        "line 3, col 5: import of 'os' is not allowed [ImportRule]"
    ]
    v = violations[0]
    assert (v.rule, v.lineno, v.col, v.col_offset) == ("ImportRule", 3, 5, 4)
    assert str(SecurityViolation("bad", rule="X")) == "bad [X]"


def test_enforce_raises_security_error_with_violations():
    checker = SecurityChecker([FunctionRule({"eval"})])
    with pytest.raises(SecurityError) as info:
        checker.enforce("eval('1')")
    assert info.value.violations[0].rule == "FunctionRule"
    assert "eval" in str(info.value)
    checker.enforce("print(1)")
    assert SecurityError("plain").message == "plain"


def test_regex_rule_accepts_a_list_and_rejects_bad_patterns():
    checker = SecurityChecker([RegexRule([r"rm\s+-rf", r"sudo\s+"])])
    assert checker.check('s = "sudo  reboot"')[0].rule == "RegexRule"
    assert checker.check('s = "safe"') == []
    with pytest.raises(ValueError, match="Invalid regex"):
        RegexRule("(")
    with pytest.raises(ValueError):
        RegexRule([])


def test_function_rule_flags_aliases_and_upstream_attribute_calls():
    checker = SecurityChecker([FunctionRule({"eval"})])
    assert "reference to function 'eval'" in checker.check("f = eval")[0].message
    assert checker.check("sorted(xs, key=eval)")
    assert checker.check("df.eval('a + b')")  # upstream: attribute calls match by name
    named = SecurityChecker([FunctionRule({"compile"}, match_attributes=False)])
    assert named.check("import re\nre.compile('x')") == []


def test_import_rule_blocks_submodules_and_bound_modules():
    checker = SecurityChecker([ImportRule({"os"})])
    assert checker.check("import os.path")
    assert checker.check("from os.path import join")
    assert checker.check("from pandas.io.common import os")
    assert checker.check("import osmosis") == []


def test_custom_per_node_rule_is_called_and_positioned():
    class NoWhile(SecurityRule):
        node_types = (ast.While,)

        def check(self, node: ast.AST) -> list[SecurityViolation]:
            return [SecurityViolation("no while loops")]

    violations = SecurityChecker([NoWhile()]).check("x = 0\nwhile x:\n    pass\n")
    assert [(v.rule, v.lineno, v.col) for v in violations] == [("NoWhile", 2, 1)]


def test_a_crashing_rule_blocks_the_cell():
    class Broken(SecurityRule):
        def check_cell(self, cell):  # type: ignore[no-untyped-def]
            raise RuntimeError("boom")

    violations = SecurityChecker([Broken()]).check("x = 1")
    assert violations and "was not run" in violations[0].message


def test_add_rule_type_checks():
    with pytest.raises(TypeError):
        SecurityChecker(["not a rule"])  # type: ignore[list-item]


# -- what runs: parsing and IPython ---------------------------------------------------------------
def test_empty_cells_may_run_and_non_strings_may_not(strict):
    assert strict.check("") == []
    assert strict.check("   \n\n") == []
    assert strict.check(None)[0].rule == "SyntaxRule"  # type: ignore[arg-type]


def test_cells_that_do_not_parse_are_refused(strict):
    (v,) = strict.check("x = 1\ny = (2 +\n")
    assert v.rule == "SyntaxRule" and v.lineno == 2 and "does not parse" in v.message
    assert strict.check("a\x00b")[0].rule == "SyntaxRule"
    assert strict.check("(" * 300 + ")" * 300)[0].rule == "SyntaxRule"


def test_lines_point_at_the_code_as_written(strict):
    # IPython drops leading blank lines and the common indent; positions map back.
    (v,) = strict.check("\n\n    x = 1\n    import os\n")
    assert (v.lineno, v.col) == (4, 5)


def test_top_level_await_is_allowed(strict):
    assert strict.check("async def f():\n    return 1\nx = await f()") == []


@pytest.mark.parametrize(
    "cell",
    ["!ls", "!!ls", "x = !ls", "%ls", "%%bash\nls\n", "ls?", "x??", "/print 1", ",print a b",
     ";print a b", "x = %who_ls", "if True:\n    !ls\n", "%env", "  %ls"],
)  # fmt: skip
def test_ipython_rewrites_are_refused(standard, strict, cell):
    for checker in (standard, strict):
        violations = checker.check(cell)
        assert violations and violations[0].rule == "MagicRule", [str(v) for v in violations]
        # Reported as what the model wrote, not as the get_ipython() call it becomes.
        assert all("get_ipython" not in v.message for v in violations)


@pytest.mark.parametrize(
    "cell", ["ls", "cat /etc/passwd", "cd /tmp", "time", "env", "rm -rf x", "pwd"]
)
def test_one_line_automagic_is_refused(strict, cell):
    (v,) = [v for v in strict.check(cell) if v.rule == "MagicRule"]
    assert "magic" in v.message and v.lineno == 1


@pytest.mark.parametrize(
    "cell", ["ls = 1", "x = 1\nls", "len", "history.tail()", "s = '!ls'", "t = '''\n%ls\n'''"]
)
def test_python_that_only_looks_like_magic_passes(strict, cell):
    assert [v for v in strict.check(cell) if v.rule == "MagicRule"] == []


def test_custom_checker_refuses_magics_unless_allowed():
    assert SecurityChecker([]).check("!ls")[0].rule == "MagicRule"
    assert SecurityChecker([], magics=True).check("%timeit 1") == []


def test_unicode_identifiers_are_checked_after_normalisation(strict):
    (v,) = strict.check("ｅval('1')")
    assert v.rule == "FunctionRule" and "'eval'" in v.message


def test_too_many_violations_are_capped(strict):
    violations = strict.check("import os\n" * 40)
    assert len(violations) == 12
    assert "more violations" in violations[-1].message


# -- policies -----------------------------------------------------------------------------------
def test_policies_by_name():
    assert SecurityChecker.POLICIES == ("trusted", "standard", "strict")
    assert SecurityChecker.for_policy(" Strict ").policy == "strict"
    with pytest.raises(ValueError, match="trusted, standard, strict"):
        SecurityChecker.for_policy("paranoid")
    with pytest.raises(ValueError, match="not a module name"):
        SecurityChecker.for_policy("strict", extra_imports=["os; rm"])


def test_trusted_checks_nothing():
    trusted = SecurityChecker.for_policy("trusted")
    assert trusted.check("import os\nos.system('id')") == []
    assert trusted.check("!ls") == []
    assert trusted.prompt_line() == ""


def test_prompt_lines_are_one_short_line(standard, strict):
    for checker in (standard, strict):
        line = checker.prompt_line()
        assert line.startswith(f"Security policy: {checker.policy}")
        assert "\n" not in line and len(line) < 300
    assert "write to io.BytesIO/StringIO; no network" in strict.prompt_line()


def test_extra_imports_extend_the_strict_allow_list():
    checker = SecurityChecker.for_policy("strict", extra_imports=["heapq"])
    assert checker.check("import heapq\nheapq.nsmallest(2, [3, 1, 2])") == []
    assert "heapq" in checker.prompt_line()
    assert SecurityChecker.for_policy("strict").check("import heapq")


def test_extra_imports_lift_the_standard_deny_list():
    assert SecurityChecker.for_policy("standard").check("import ctypes")
    assert (
        SecurityChecker.for_policy("standard", extra_imports=("ctypes",)).check("import ctypes")
        == []
    )


def test_standard_allows_ordinary_file_work(standard):
    code = (
        'import pandas as pd\nimport pathlib\ndf = pd.read_csv("data.csv")\n'
        'df.to_parquet("out.parquet")'
    )
    assert standard.check(code) == []


# -- strict rules, allowed and refused side by side ----------------------------------------------
@pytest.mark.parametrize(
    ("allowed", "refused", "rule"),
    [
        ('getattr(df, "shape")', 'getattr(df, "_mgr")', "ReflectionRule"),
        ('hasattr(df, "mean")', "hasattr(df, name)", "ReflectionRule"),
        ("type(x).__name__", 'type("X", (), {})', "ReflectionRule"),
        ('"{:.2f} {name}".format(1, name=2)', '"{0.real}".format(1)', "FormatRule"),
        ('"{0[a]}".format({"a": 1})', "tmpl.format(1)", "FormatRule"),
        ('df.query("a > 1 and b == @lim")', 'df.query(f"a > {lim}")', "QueryRule"),
        ('df.query("`my col` > 1")', 'df.query("@lim.real > 1")', "QueryRule"),
        ("import io\nbuf = io.BytesIO()\ndf.to_parquet(buf)", "df.to_parquet(buf)", "IORule"),
        ("import io\npd.read_csv(io.StringIO(text))", 'pd.read_csv("/data.csv")', "IORule"),
        ('pd.read_csv("data/sales.csv")', 'pd.read_csv("../sales.csv")', "IORule"),
        ('pd.read_parquet("./t.parquet")', 'df.to_parquet("t.parquet")', "IORule"),
        ("df.to_csv(index=False)", "df.to_csv(path)", "IORule"),
        ("import pandas as pd\npd.api.types.is_numeric_dtype", "import typing\ntyping.types",
         "ModuleRule"),
        ("from pandas import DataFrame", "from json import codecs", "ImportRule"),
        ("pd.options.display.max_rows = 10", "import json\njson.loads = print", "ModuleRule"),
        ("class A:\n    def __init__(self):\n        self._x = 1", "a._x", "AttributeRule"),
        ("class A:\n    def __repr__(self):\n        return 'A'",
         "class A:\n    def __getattr__(self, n):\n        return n", "HookRule"),
        ("for _ in range(2):\n    pass", "_ih", "NameRule"),
        ('s.str.replace("https://", "")', 'thumbnail("/etc/passwd", buf)', "IORule"),
        ("import enum\nE = enum.Enum('E', 'A B')", "import enum\nE = enum.Enum('E', names)",
         "ReflectionRule"),
        ("import io\nbuf = io.BytesIO()\nnp.load(buf)", "np.load(buf, allow_pickle=True)",
         "DeserializationRule"),
        ("df.open.mean()", "df.open('x')", "IORule"),
        ('import operator\noperator.attrgetter("a.b", "c")',
         'import operator\noperator.attrgetter("a", n)', "AttrGetterRule"),
        ('from operator import methodcaller as mc\nmc("sum", axis=1)',
         'from operator import methodcaller as mc\nmc("_x")', "AttrGetterRule"),
        ("import operator\nf = operator.itemgetter",
         "import operator\nf = operator.attrgetter", "AttrGetterRule"),
        ("class A:\n    def copy(self):\n        return type(self)(1, 2, 3)",
         "type(df)('E', (), {})", "ClassFactoryRule"),
        ("from abc import ABCMeta\nclass A(metaclass=ABCMeta):\n    pass",
         "class A(metaclass=f):\n    pass", "ClassFactoryRule"),
        ('df.query("a > 1", engine="numexpr")', 'df.query("a > 1", engine="python")', "QueryRule"),
        ("x = 2**64 * 10**6", "x = 2**64**5", "ConstantSizeRule"),
        ('line = "-" * 80', "s = '-' * 10**10", "ConstantSizeRule"),
        ("np.zeros((1000, 1000))", "np.ones((10**5, 10**5))", "ConstantSizeRule"),
        ("from __future__ import annotations", "from __future__ import braces", "ImportRule"),
        ("import contextlib\ncontextlib.suppress(KeyError)",
         "import contextlib\ncontextlib.chdir('x')", "ModuleRule"),
        ("import zoneinfo\nzoneinfo.ZoneInfo('UTC')",
         "import zoneinfo\nzoneinfo.reset_tzpath(['x'])", "ModuleRule"),
    ],
)  # fmt: skip
def test_strict_rule_pairs(strict, allowed, refused, rule):
    assert strict.check(allowed) == [], [str(v) for v in strict.check(allowed)]
    assert rule in rules_of(strict.check(refused)), [str(v) for v in strict.check(refused)]


def test_buffer_made_in_an_earlier_cell_gets_a_helpful_message(strict):
    (v,) = strict.check("fig.savefig(buf)")
    assert "io.BytesIO/io.StringIO buffer made in this cell" in v.message


def test_buffer_name_rebound_later_is_not_trusted(strict):
    code = "import io\nout = io.StringIO()\nout = 'x.csv'\ndf.to_csv(out)"
    assert "IORule" in rules_of(strict.check(code))
    code = "import io\nout = df.copy()\nout = io.StringIO()\ndf.to_csv(out)"
    assert strict.check(code) == []


def test_private_attributes_of_library_subclasses_stay_private(strict):
    code = "import pandas as pd\nclass F(pd.DataFrame):\n    def f(self):\n        return self._mgr"
    assert "AttributeRule" in rules_of(strict.check(code))


def test_module_chains_resolve_without_an_import_in_the_cell(strict):
    # `pd` imported in an earlier cell: the chain is still followed through pandas.
    v = [x for x in strict.check("pd.io.common.os") if x.rule == "ModuleRule"]
    assert v and "pandas.io.common" in v[0].message
    # ...unless this cell rebinds the name to something else.
    assert [x for x in strict.check("pd = {}\npd.io") if x.rule == "ModuleRule"] == []


def test_query_strings_are_checked_with_the_cell_rules(strict):
    violations = strict.check('import pandas as pd\npd.eval("pd.io.common.os")')
    assert violations and all(v.lineno == 2 for v in violations)
    assert any("in .eval() string" in v.message for v in violations)


def test_orchestrators_may_run_sub_agents_but_not_drive_their_runtime(standard, strict):
    ok = (
        'await cleaner.run("clean raw_data")\n'
        'insights = await analyzer.runtime.retrieve("insights")'
    )
    for checker in (standard, strict):
        assert checker.check(ok) == []
        for bad in (
            'await sub.runtime.execute("import os")',
            "sub.runtime.security_checker = None",
        ):
            assert checker.check(bad), bad
    assert (
        standard.check('import sqlite3\ncon = sqlite3.connect(":memory:")\ncon.execute("select 1")')
        == []
    )


def test_standard_checks_literal_names_and_literal_query_strings(standard):
    assert standard.check('getattr(df, "shape")') == []
    assert standard.check('df.query(f"a > {x}")') == []
    assert standard.check('df.query("a > @df.b.mean()")') == []
    assert "LiteralNameRule" in rules_of(standard.check('import json\ngetattr(json, "builtins")'))
    refused = standard.check("df.query(\"@pd.io.common.os.system('id') == 1\")")
    assert "QueryTextRule" in rules_of(refused)


def test_literal_size_rule_reports_the_outermost_expression_once(standard, strict):
    for checker in (standard, strict):
        (v,) = checker.check("n = 10**10**10 + 1")
        assert v.rule == "ConstantSizeRule" and (v.lineno, v.col) == (1, 5)
        assert "smaller sizes" in v.message
