"""Security checker speed and accuracy on the corpora.

    python bench/security.py        # prints a table, writes bench/results/security.json

Speed: time to check a 200-line analysis cell (target: <= 5 ms median), built from the
benign corpus (real pandas/numpy/matplotlib code) cut to 200 lines. The first check in a
process also pays for importing IPython's transformer and, for strict, pandas/numpy (to
resolve module chains); it is reported separately.
Accuracy: benign cells refused (target 0) and escapes refused, per policy, over the
benign corpus, the escape corpus and issue 19's escapes by class, with the mean time to
check one corpus cell.
"""

from __future__ import annotations

import ast
import gc
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LINES = 200
REPEAT = 300


def _imports() -> None:
    for path in (ROOT, ROOT / "bench"):
        if str(path) not in sys.path:
            sys.path.insert(0, str(path))


def analysis_cell(lines: int = LINES) -> str:
    """A realistic cell of exactly *lines* lines made of the benign corpus."""
    _imports()
    from tests.security.benign_everyday import ALL_BENIGN
    from tests.security.corpus import SETUP

    parts = [SETUP]
    for cell in ALL_BENIGN:
        if cell.strict_reason:
            continue
        parts.append(f"# --- {cell.name}\n{cell.code}\n")
    text = "\n".join(parts).splitlines()
    while len(text) < lines:
        text += text
    cut = text[:lines]
    # Do not end inside a block: trim back to the last top-level line.
    while cut and (cut[-1].startswith((" ", "\t")) or cut[-1].rstrip().endswith((":", "\\", ","))):
        cut.pop()
    while len(cut) < lines:
        cut.append("pass")
    return "\n".join(cut) + "\n"


def measure(checker: Any, code: str) -> dict[str, float]:
    """Cold time, then wall-clock and CPU medians over REPEAT checks (ms)."""
    started = time.perf_counter()
    first = checker.check(code)
    cold = time.perf_counter() - started
    assert not first, [str(v) for v in first]
    resolver = getattr(checker, "resolver", None)
    if resolver is not None:
        resolver.wait_warm()  # the background imports would compete with the loop below
    for _ in range(20):
        checker.check(code)
    wall, cpu = [], []
    for _ in range(REPEAT):
        w0, c0 = time.perf_counter(), time.process_time()
        checker.check(code)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    wall.sort()
    return {
        "cold": cold * 1000,
        "median": statistics.median(wall) * 1000,
        "p90": wall[int(len(wall) * 0.9)] * 1000,
        "cpu": statistics.median(cpu) * 1000,
    }


def corpus_rows() -> list[dict[str, Any]]:
    """Benign cells refused and escapes refused per policy, and the mean check time."""
    _imports()
    from cave_tui.security import SecurityChecker
    from tests.security.benign_everyday import ALL_BENIGN
    from tests.security.corpus import CORPUS
    from tests.security.escape_classes import CLOSED

    rows: list[dict[str, Any]] = []
    escapes = [e.code for e in CORPUS] + [e.code for e in CLOSED]
    for policy in ("standard", "strict"):
        checker = SecurityChecker.for_policy(policy)
        benign = [b.code for b in ALL_BENIGN if policy == "standard" or not b.strict_reason]
        started = time.perf_counter()
        refused = sum(bool(checker.check(code)) for code in benign)
        blocked = sum(bool(checker.check(code)) for code in escapes)
        mean = (time.perf_counter() - started) / (len(benign) + len(escapes)) * 1000
        rows.append(
            {
                "metric": f"{policy}: benign cells refused (of {len(benign)})",
                "value": refused,
                "target": "0",
                "ok": refused == 0,
            }
        )
        rows.append({"metric": f"{policy}: escapes refused (of {len(escapes)})", "value": blocked})
        rows.append(
            {"metric": f"{policy}: mean check of one corpus cell", "value": round(mean, 3),
             "unit": "ms"}
        )  # fmt: skip
    return rows


def main() -> None:
    _imports()
    from _common import report

    from cave_tui.security import SecurityChecker

    code = analysis_cell()
    assert len(code.splitlines()) == LINES
    load_before = os.getloadavg()[0]
    rows = []
    for policy in ("strict", "standard"):
        checker = SecurityChecker.for_policy(policy)
        m = measure(checker, code)
        rows.append(
            {
                "metric": f"{policy}: check a {LINES}-line cell, median",
                "value": round(m["median"], 3),
                "unit": "ms",
                "target": "<= 5",
                "ok": m["median"] <= 5.0,
            }
        )
        rows.append({"metric": f"{policy}: same, p90", "value": round(m["p90"], 3), "unit": "ms"})
        rows.append(
            {
                "metric": f"{policy}: same, CPU time median",
                "value": round(m["cpu"], 3),
                "unit": "ms",
            }
        )
        rows.append(
            {
                "metric": f"{policy}: first check in a process",
                "value": round(m["cold"], 1),
                "unit": "ms",
            }
        )
    # Reference: Python's own parse of the same cell (GC paused, as the checker does): the
    # floor any AST-based checker pays on this machine at this moment.
    parse = []
    gc.disable()
    try:
        for _ in range(REPEAT):
            started = time.perf_counter()
            ast.parse(code)
            parse.append(time.perf_counter() - started)
    finally:
        gc.enable()
    rows.append(
        {
            "metric": "reference: ast.parse of the same cell, median",
            "value": round(statistics.median(parse) * 1000, 3),
            "unit": "ms",
        }
    )
    rows.extend(corpus_rows())
    rows.append({"metric": "load average (1 min) at start", "value": round(load_before, 2)})
    report("security", rows, {"cell_lines": LINES, "repeat": REPEAT})


if __name__ == "__main__":
    main()
