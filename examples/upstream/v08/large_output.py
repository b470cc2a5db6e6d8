"""Output too long for the model stays in the namespace (upstream CaveAgent 0.8).

Port of upstream 0.8's `examples/large_output.py` (same scenario, written for this
package). A cell prints a log far longer than `max_exec_output`: the model reads a
`<persisted-output>` marker naming `_output_1` with the log's first lines, and the whole
log is kept in `_output_1`. The second question is answered from that value, without
fetching the log again. The model comes from LLM_MODEL_ID, LLM_API_KEY and LLM_BASE_URL.
"""

import asyncio
import os

from cave_tui import CaveAgent
from cave_tui.models import OpenAIModel
from cave_tui.renderers import render_run
from cave_tui.runtime import Function, IPythonRuntime


def fetch_log() -> str:
    """Return the application's log (slow and never the same twice: call it once)."""
    rows = []
    for i in range(4000):
        level = "ERROR" if i % 500 == 0 else "INFO"
        stamp = f"2026-07-28 10:{i % 60:02d}:00"
        rows.append(f"{stamp} {level} worker-{i % 8} request={i} latency={i % 300}ms")
    return "\n".join(rows)


async def main() -> None:
    model = OpenAIModel(
        model_id=os.getenv("LLM_MODEL_ID"),
        api_key=os.getenv("LLM_API_KEY"),
        base_url=os.getenv("LLM_BASE_URL"),
    )
    runtime = IPythonRuntime(functions=[Function(fetch_log)])
    # A small limit, so the marker shows at once (the default is 5,000 characters).
    agent = CaveAgent(model, runtime=runtime, max_exec_output=1500)
    try:
        await render_run(agent, "Call fetch_log() and print everything it returns.")
        kept = await runtime.get_from_namespace("_output_1")
        print(f"\n[host] _output_1 holds {len(kept):,} characters\n")
        await render_run(
            agent,
            "How many ERROR lines were there, and what is the highest latency? "
            "Use the output you already have.",
        )
    finally:
        await model.aclose()


if __name__ == "__main__":
    asyncio.run(main())
