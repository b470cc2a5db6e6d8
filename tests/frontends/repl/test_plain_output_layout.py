"""Issue 31, item 9, in `cave --plain`: a frame given to final_answer() prints as its table's
lines, and a code line wider than the terminal wraps instead of being cut."""

from __future__ import annotations

from tests.frontends.repl.test_plain import run_lines

LONG = "label = " + " + ".join(f"'part{i}'" for i in range(24)) + "  # THE-END"
REPLIES = [
    f"```python\nimport pandas as pd\n{LONG}\n"
    "frame = pd.DataFrame({'carrier': ['UA', 'AA'], 'mean_delay': [12.5, 8.25]})\n"
    "final_answer(frame)\n```"
]


async def test_plain_prints_a_frame_answer_as_rows_and_wraps_long_code():
    text, _services = await run_lines(["which carrier?", "/quit"], REPLIES)
    rows = [line.split() for line in text.splitlines()]
    assert ["carrier", "mean_delay"] in rows, text
    header = rows.index(["carrier", "mean_delay"])
    assert rows[header + 1 : header + 3] == [["0", "UA", "12.50"], ["1", "AA", "8.25"]]
    joined = "".join(line.strip("│ ") for line in text.splitlines())
    assert "'part23'  # THE-END" in joined, text
