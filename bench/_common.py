"""Shared bits for the benchmarks: results as JSON under bench/results/ and a table on stdout."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def median_time(fn: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def report(name: str, rows: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> Path:
    """Print rows (metric, value, unit, target, ok) as a table and write them as JSON."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    data = {"bench": name, "machine": machine(), "results": rows, **(extra or {})}
    path.write_text(json.dumps(data, indent=2, default=str))
    width = max(len(r["metric"]) for r in rows)
    print(f"{name}  ({data['machine']['cores']} cores, Python {data['machine']['python']})")
    print(f"{'metric'.ljust(width)}  {'value':>12}  {'target':>12}  ok")
    for r in rows:
        value = r["value"]
        shown = f"{value:,.3f}" if isinstance(value, float) else f"{value:,}"
        target = r.get("target")
        ok = r.get("ok")
        mark = "" if ok is None else ("yes" if ok else "NO")
        print(f"{r['metric'].ljust(width)}  {shown:>12} {r.get('unit', ''):<3} {str(target or ''):>10}  {mark}")
    print(f"-> {path}")
    return path
