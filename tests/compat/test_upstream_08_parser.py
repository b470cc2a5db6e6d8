"""Upstream 0.8's `StreamingTextParser` beside 0.7's: one parser serves both callers.

0.8's caller stops at the first block and reads `remainder`; 0.7's keeps feeding and
reads every segment. Fences as 0.8 reads them (any case, indented, an info string
dropped, an empty block is text), with cave's rule that a fence inside a string does
not end the block.
"""

from __future__ import annotations

import pytest

from cave_tui.parsing import Segment, SegmentType, StreamingTextParser

TWO_BLOCKS = "Intro\n```python\na = 1\n```\nbetween\n```python\nb = 2\n```\nend"


def codes(segments: list[Segment]) -> list[str]:
    return [s.content for s in segments if s.type is SegmentType.CODE]


def prose(segments: list[Segment]) -> str:
    return "".join(s.content for s in segments if s.type is SegmentType.TEXT)


def until_first_block(text: str, size: int) -> tuple[list[Segment], str]:
    """As 0.8's agent reads a stream: stop once a block is complete."""
    parser = StreamingTextParser()
    out: list[Segment] = []
    for at in range(0, len(text), size):
        out += parser.process_chunk(text[at : at + size])
        if parser.is_first_code_block_completed():
            return out, parser.remainder + text[at + size :]
    return out + parser.flush(), ""


def whole(text: str, size: int) -> list[Segment]:
    """As 0.7's caller reads a stream: every chunk, then flush."""
    parser = StreamingTextParser()
    out: list[Segment] = []
    for at in range(0, len(text), size):
        out += parser.process_chunk(text[at : at + size])
    return out + parser.flush()


@pytest.mark.parametrize("size", [1, 5, 1000])
def test_a_08_caller_gets_the_first_block_and_the_rest_unparsed(size):
    segments, rest = until_first_block(TWO_BLOCKS, size)
    assert codes(segments) == ["a = 1"]
    assert prose(segments) == "Intro\n"
    assert rest == "\nbetween\n```python\nb = 2\n```\nend"


@pytest.mark.parametrize("size", [1, 5, 1000])
def test_a_07_caller_that_keeps_feeding_gets_every_block(size):
    segments = whole(TWO_BLOCKS, size)
    assert codes(segments) == ["a = 1", "b = 2"]
    assert prose(segments) == "Intro\n\nbetween\n\nend"


def test_the_call_after_the_stop_is_kept_and_the_next_one_resumes():
    parser = StreamingTextParser()
    assert codes(parser.process_chunk("```python\nx = 1\n```")) == ["x = 1"]
    assert parser.process_chunk("said ") == []
    assert parser.remainder == "said "
    assert prose(parser.process_chunk("so")) == "said so"
    assert parser.remainder == ""
    assert prose(parser.flush()) == ""
    assert not parser.is_first_code_block_completed()
    assert codes(parser.process_chunk("```python\ny = 2\n```")) == ["y = 2"]


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_fences_as_08_reads_them(size):
    # any case, indented up to three spaces, an info string dropped, the code dedented
    text = "Try:\n  ```Python title=demo\n  x = 1\n  print(x)\n  ```\n"
    segments, _ = until_first_block(text, size)
    assert codes(segments) == ["x = 1\nprint(x)"]
    assert prose(segments) == "Try:\n  "  # the fence's indent, as 0.8 streams it


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_a_fence_named_in_a_sentence_is_prose_but_one_ending_its_line_opens(size):
    text = "Wrap code in ```python fences like this:\n```python\nok = True\n```"
    segments, _ = until_first_block(text, size)
    assert codes(segments) == ["ok = True"]
    assert prose(segments) == "Wrap code in ```python fences like this:\n"
    segments, _ = until_first_block("Run```python\nx = 1\n```", size)
    assert codes(segments) == ["x = 1"]


def test_a_stream_ending_on_the_fence_line_is_text():
    assert prose(whole("so:\n```python copy", 3)) == "so:\n```python copy"


@pytest.mark.parametrize("size", [1, 1000])
def test_an_empty_block_is_text_and_not_the_first_block(size):
    segments, _ = until_first_block("a\n```python\n  \n```\nb\n```python\nx = 1\n```", size)
    assert codes(segments) == ["x = 1"]
    assert prose(segments) == "a\n```python\n  \n```\nb\n"


@pytest.mark.parametrize("size", [1, 1000])
def test_code_that_does_not_parse_ends_at_its_fence(size):
    segments, rest = until_first_block("```python\nprint('it's')\n```\nafter", size)
    assert codes(segments) == ["print('it's')"]
    assert rest == "\nafter"


@pytest.mark.parametrize("size", [1, 1000])
def test_a_fence_inside_a_string_or_a_comment_does_not_end_the_block(size):
    code = 's = """\n```\n"""\nt = \'a\\\n```b\'\nx = 1  # wrap it in ``` fences\nprint(s, t, x)'
    segments, rest = until_first_block(f"```python\n{code}\n```\ndone", size)
    assert codes(segments) == [code]
    assert rest == "\ndone"
