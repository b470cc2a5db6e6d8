from cave_tui.agent.extraction import extract_blocks, extract_code, prose_of


def test_python_fence():
    assert extract_code("Here:\n```python\nx = 1\n```\nDone.") == "x = 1"


def test_aliases_and_case():
    for info in ("py", "Python", "ipython", "python3"):
        assert extract_code(f"```{info}\ny = 2\n```") == "y = 2", info


def test_no_code_is_final_answer():
    assert extract_code("The answer is 42.") is None
    assert extract_code("Use `x = 1` inline") is None


def test_other_languages_ignored():
    assert extract_code('```bash\nls -la\n```\n```json\n{"a": 1}\n```') is None


def test_bare_fence_that_parses_is_code():
    assert extract_code("```\nz = [1, 2]\nprint(z)\n```") == "z = [1, 2]\nprint(z)"


def test_bare_fence_that_does_not_parse_is_not_code():
    assert extract_code("```\nthis is not python at all\n```") is None


def test_several_blocks_join_in_order():
    text = "first\n```python\na = 1\n```\nthen\n```py\nb = a + 1\n```\n"
    assert extract_code(text) == "a = 1\nb = a + 1"


def test_backticks_inside_a_string_do_not_cut_the_block():
    text = 'Try:\n```python\nmd = """\n```\nnot the end\n"""\nprint(len(md))\n```\nok'
    code = extract_code(text)
    assert code is not None
    assert "print(len(md))" in code
    assert 'md = """' in code
    compile(code, "<t>", "exec")


def test_inline_triple_backticks_in_code_line():
    text = '```python\nfence = "```"\nprint(fence)\n```'
    assert extract_code(text) == 'fence = "```"\nprint(fence)'


def test_top_level_await_counts_as_python():
    assert extract_code("```\nawait agent.run('x')\n```") == "await agent.run('x')"


def test_unclosed_fence_runs_to_end():
    assert extract_code("```python\nx = 1\nprint(x)") == "x = 1\nprint(x)"


def test_tilde_fence_and_custom_identifier():
    assert extract_code("~~~python\nq = 3\n~~~") == "q = 3"
    assert extract_code("```mycode\nq = 4\n```", identifier="mycode") == "q = 4"


def test_prose_without_code():
    text = "Look:\n```python\nx = 1\n```\nDone."
    assert prose_of(text) == "Look:\nDone."
    assert len(extract_blocks(text)) == 1
