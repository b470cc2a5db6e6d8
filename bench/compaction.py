"""Compaction and sub-agent figures: what the checks cost per step, and forwarding latency.

    python bench/compaction.py      # prints a table, writes bench/results/compaction.json

- the per-step budget check on a long history, anchored to a provider-reported count
  (what runs before every model call) and counted in full with cl100k (the fallback);
- a tier-1 + tier-3 compaction of that history (no model call);
- the delay between a sub-agent emitting an event on its runtime's worker thread and the
  parent's `stream_events` yielding it.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import report

from cave_tui import CaveAgent
from cave_tui.agent import EventType
from cave_tui.agent.compaction import Compactor
from cave_tui.agent.events import NoticeEvent
from cave_tui.models import ModelError, ScriptedModel
from cave_tui.models.base import Usage
from cave_tui.models.tokens import count_messages
from cave_tui.runtime import IPythonRuntime, Variable


def long_history(steps: int) -> list[dict[str, str]]:
    history = [{"role": "user", "content": "Analyse the data step by step."}]
    for i in range(steps):
        code = f"Step {i}.\n```python\nt{i} = df.groupby('k')['v'].mean()\nprint(t{i})\n```"
        output = "Output:\n" + "\n".join(f"k{j}    {i * 0.37 + j * 1.13:.4f}" for j in range(60))
        history += [{"role": "assistant", "content": code}, {"role": "user", "content": output}]
    return history


async def budget_checks(steps: int) -> dict[str, float]:
    agent = CaveAgent(ScriptedModel([]), messages=long_history(steps), context_window=1_000_000)
    compactor: Compactor = agent.compactor
    tokens = count_messages(await agent.build_request())
    runs = 20
    started = time.perf_counter()
    for _ in range(runs):
        count_messages(await agent.build_request())
    full = (time.perf_counter() - started) / runs
    # Anchored: the provider reported the request two messages ago.
    compactor.observe_usage(Usage(prompt_tokens=tokens), True, len(agent.history) - 2)
    started = time.perf_counter()
    for _ in range(runs):
        await compactor.current_tokens()
    anchored = (time.perf_counter() - started) / runs
    # A compaction without the model (the summariser fails at once: tiers 1 and 3).
    agent.model = ScriptedModel([ModelError("no summaries in this benchmark")])
    compactor.context_window = compactor.effective_window = tokens // 2
    started = time.perf_counter()
    events = [e async for e in compactor.maybe_compact(1)]
    compaction = time.perf_counter() - started
    done = next(e for e in events if e.type is EventType.COMPACTED)
    return {
        "tokens": tokens,
        "full": full,
        "anchored": anchored,
        "compaction": compaction,
        "after": done.tokens_after,
    }


async def forwarding_latency(samples: int) -> list[float]:
    stamps: list[float] = []
    code = (
        "```python\nimport time\n"
        f"for i in range({samples}):\n    stamp(time.perf_counter())\n    time.sleep(0.01)\n```"
    )
    child = CaveAgent(ScriptedModel([code, "done"]), name="child")

    def stamp(value: float) -> None:
        # An event per stamp, emitted from the child's cell thread like any other event.
        child._emit(NoticeEvent(content=str(value)))

    child.runtime.inject(Variable("stamp", stamp))
    parent = CaveAgent(
        ScriptedModel(["```python\nr = await child.run('go')\n```", "ok"]),
        runtime=IPythonRuntime(variables=[Variable("child", child)]),
    )
    async for event in parent.stream_events("go"):
        if event.agent == "child" and event.type is EventType.NOTICE:
            stamps.append(time.perf_counter() - float(event.content))
    return stamps


async def main() -> None:
    rows = []
    for steps in (100, 400):
        figures = await budget_checks(steps)
        label = f"{steps} steps, {figures['tokens']:,} tokens"
        rows += [
            {
                "metric": f"budget check, full cl100k count ({label})",
                "value": figures["full"] * 1000,
                "unit": "ms",
            },
            {
                "metric": f"budget check, anchored to provider count ({label})",
                "value": figures["anchored"] * 1000,
                "unit": "ms",
            },
            {
                "metric": f"tier 1+3 compaction, no model ({label})",
                "value": figures["compaction"] * 1000,
                "unit": "ms",
            },
        ]
    latency = await forwarding_latency(100)
    rows += [
        {
            "metric": "sub-agent event forwarding latency, median",
            "value": statistics.median(latency) * 1000,
            "unit": "ms",
        },
        {
            "metric": "sub-agent event forwarding latency, max",
            "value": max(latency) * 1000,
            "unit": "ms",
        },
    ]
    report("compaction", rows)


if __name__ == "__main__":
    asyncio.run(main())
