"""API resilience: retried provider errors and replies cut by the output limit.

Port of upstream CaveAgent's `examples/retry_demo.py` (same scenario; only the import
differs). Retries (429, 5xx, timeouts, dropped connections) and the continuation of a
reply cut at `finish_reason="length"` happen inside the model and the agent: the code
below is an ordinary run. The model comes from LLM_MODEL_ID, LLM_API_KEY and
LLM_BASE_URL.
"""

import asyncio
import os
import random

from cave_tui import CaveAgent
from cave_tui.models import OpenAIServerModel
from cave_tui.runtime import Function, IPythonRuntime, Variable

model = OpenAIServerModel(
    model_id=os.getenv("LLM_MODEL_ID"),
    api_key=os.getenv("LLM_API_KEY"),
    base_url=os.getenv("LLM_BASE_URL"),
)

NAMES = ["Alice", "Bob", "Charlie", "Diana", "Eve", "Frank", "Grace", "Hank"]


def generate_data(n: int) -> list[dict]:
    """Return n sample records with an id, a name and a score from 50 to 100 (seeded)."""
    rng = random.Random(42)
    return [{"id": i, "name": rng.choice(NAMES), "score": rng.randint(50, 100)} for i in range(n)]


async def main():
    print("=== Retry & recovery ===")
    print("Provider errors are retried with backoff; a reply cut by max_tokens is continued.\n")

    runtime = IPythonRuntime(
        functions=[Function(generate_data)],
        variables=[Variable("summary", description="Put the final summary here")],
    )
    agent = CaveAgent(model, runtime=runtime, display=True)

    # A long, detailed answer: with a low max_tokens the reply may be cut and continued.
    await agent.run(
        "Generate 50 sample records using generate_data, then produce a detailed "
        "statistical analysis: group by name, compute per-person average/min/max "
        "scores, rank them, and store a formatted summary in the 'summary' variable."
    )

    print("\n=== Summary ===")
    print(await runtime.retrieve("summary"))


if __name__ == "__main__":
    asyncio.run(main())
