"""Agent-core figures: prompt size, per-step token and time overhead, `cave --version` time.

    python bench/core.py            # prints a table, writes bench/results/core.json
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
from _common import report  # noqa: E402

from cave_tui import CaveAgent  # noqa: E402
from cave_tui.models import ScriptedModel  # noqa: E402
from cave_tui.models.base import Completion, Model, TextDelta, Usage  # noqa: E402
from cave_tui.models.tokens import count_messages, count_text  # noqa: E402
from cave_tui.runtime.ipython import IPythonRuntime  # noqa: E402

UPSTREAM_SYSTEM = """
You are a Python code execution agent. You solve tasks by writing and executing Python code using the provided functions, variables, and their methods.

- You solve tasks by writing and executing Python code using the provided functions, variables, and their methods.
- Carefully read and analyze the user's input.
- If the task requires Python code:
  - Generate appropriate Python code to address the user's request.
  - Your code will then be executed in a Python environment, and the execution result will be returned to you as input for the next step.
  - During each intermediate step, you can use 'print()' to save whatever important information you will then need in the following steps.
  - These print outputs will then be given to you as input for the next step.
  - Review the result and generate additional code as needed until the task is completed.
- CRITICAL EXECUTION CONTEXT: You are operating in a persistent Jupyter-like environment where:
  - Each code block you write is executed in a new cell within the SAME continuous session
  - ALL variables, functions, and imports persist across cells automatically
  - You can directly reference any variable created in previous cells without using locals(), globals(), or any special access methods
- If the task doesn't require Python code, provide a direct answer based on your knowledge.
- Always provide your final answer in plain text, not as a code block.
- You must not perform any calculations or operations yourself, even for simple tasks like sorting or addition.
- Write your code in a python code block. In each step, write all your code in only one block.
- Never predict, simulate, or fabricate code execution results.
- To solve the task, you must plan forward to proceed in a series of steps, in a cycle of Thought and Code sequences.
- Use ONLY the provided functions, variables, and types to complete tasks. Do not assume other tools exist.
- Example usage:
```python
# Call a function
result = add(5, 3)
print(f"Result: {result}")

# Use a variable's methods (check <types> for available methods)
processed = processor.process_list(data)
print(f"Processed: {processed}")
```

You have access to:

<functions>

</functions>

<variables>

</variables>

<types>

</types>

<skills>

</skills>
"""


class InstantModel(Model):
    """Replies at once, with fixed usage: measures the agent, not a model."""

    model_id = "instant"

    def __init__(self, reply: str) -> None:
        self.reply = reply

    async def stream(self, messages: list[Any], **kwargs: Any) -> AsyncIterator[Any]:
        yield TextDelta(self.reply)
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
    agent = CaveAgent(InstantModel("```python\n1+1\n```"), IPythonRuntime(), max_steps=steps)
    samples: list[float] = []
    last = time.perf_counter()
    async for event in agent.stream_events("spin"):
        if event.type.value == "execution_output":
            now = time.perf_counter()
            samples.append(now - last)
            last = now
    await agent.runtime.stop()
    return statistics.median(samples[5:]) * 1000


def version_time(repeat: int = 10) -> float:
    cave = Path(sys.executable).with_name("cave")
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([str(cave), "--version"], check=True, capture_output=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


async def main() -> None:
    sp = await system_prompt_tokens()
    upstream = count_text(UPSTREAM_SYSTEM.strip())
    per_step = await tokens_per_step()
    overhead = await overhead_per_step()
    version = version_time()
    rows = [
        {"metric": "system prompt tokens, empty runtime (cl100k)", "value": sp, "unit": "tok",
         "target": "<= 350", "ok": sp <= 350},
        {"metric": "upstream system prompt tokens (same tokenizer)", "value": upstream, "unit": "tok"},
        {"metric": "fixed tokens added per step", "value": per_step, "unit": "tok",
         "target": "<= 40", "ok": per_step <= 40},
        {"metric": "agent overhead per step, trivial cell (median)", "value": round(overhead, 3),
         "unit": "ms", "target": "<= 2", "ok": overhead <= 2},
        {"metric": "cave --version wall time (median)", "value": round(version, 3), "unit": "s",
         "target": "<= 0.3", "ok": version <= 0.3},
    ]
    report("core", rows)


if __name__ == "__main__":
    asyncio.run(main())
