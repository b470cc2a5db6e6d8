from cave_tui.agent.observation import UNMATCHED_HINT, cut_middle, error_hints, shape_result
from cave_tui.runtime.base import ExecutionResult


def test_short_output_untouched():
    assert shape_result(ExecutionResult(success=True, output="hi\n"), 100) == "Output:\nhi"


def test_no_output_and_changed_names():
    text = shape_result(ExecutionResult(success=True, changed=["df", "x"]), 100)
    assert text == "Ran OK, no output.\n[changed: df, x]"


def test_long_output_keeps_head_and_tail_with_marker():
    output = "".join(f"line {i}\n" for i in range(5000))
    text = shape_result(ExecutionResult(success=True, output=output), 1000)
    assert text.startswith("Output:\nline 0\n")
    assert "line 4999" in text
    assert "characters elided" in text
    assert len(text) < 1200


def test_elided_count_is_exact():
    text = "a" * 600 + "b" * 600
    cut = cut_middle(text, 200)
    import re

    kept = re.sub(r"\[… [\d,]+ characters elided …\]", "", cut)

    n = int(re.search(r"\[… ([\d,]+) characters elided …\]", cut).group(1).replace(",", ""))
    assert n + kept.count("a") + kept.count("b") == 1200


def test_error_keeps_exception_line_even_with_flood_of_output():
    error = "Traceback (most recent call last):\n" + "  frame\n" * 2000 + "KeyError: 'price'"
    result = ExecutionResult(
        success=False, output="x" * 100_000, error=error, error_type="KeyError"
    )
    text = shape_result(result, 2000)
    assert text.rstrip().endswith("KeyError: 'price'")
    assert "Error:" in text
    assert len(text) < 2600


def test_security_block_names_the_rule():
    class V:
        def __str__(self):
            return "line 1, col 0: import of 'os' is not allowed [ImportRule]"

    text = shape_result(ExecutionResult(success=False, security_violations=[V()]), 500)
    assert "ImportRule" in text and "did not run" in text


async def test_an_unmatched_bracket_gets_the_filter_with_its_own_brackets(runtime):
    code = "n = flights[flights['carrier'] == 'AA']['dep_delay'] > 5].sum()"
    result = await runtime.execute(code)
    assert result.error_type == "SyntaxError"
    assert error_hints(code, result, {}) == [UNMATCHED_HINT]
