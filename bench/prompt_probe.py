"""The model's first reply to each task's first turn, under the current prompt code.

    python bench/prompt_probe.py --tasks farthest_airport,fleet_embraer
    python bench/prompt_probe.py --prompt upstream --tasks join

One model call per task (seconds each, against minutes for a full suite run): the quick loop
for trying a prompt change on the tasks that failed, before running the suite again. Prints
the reply and its token counts; runs nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_eval import DEFAULT_API_BASE, DEFAULT_MODEL, PROMPTS, make_agent, make_runtime
from eval_tasks import select

from cave_tui.agent.core import CODE_END_STOP
from cave_tui.models import ScriptedModel


async def probe(args: argparse.Namespace) -> None:
    from cave_tui.models import LiteLLMModel

    model = LiteLLMModel(
        args.model, api_base=args.api_base, api_key=args.api_key, temperature=0, max_tokens=400
    )
    for task in select(args.tasks):
        runtime = make_runtime(task)
        try:
            agent = make_agent(args.prompt, ScriptedModel([]), runtime)
            agent.history.append({"role": "user", "content": task.turns[0]})
            request = await agent.build_request()
            if args.show_request:
                print(request[-1]["content"])
            started = time.monotonic()
            text, completion = await model.complete(request, stop=[CODE_END_STOP])
            usage = completion.usage
            print(
                f"===== {task.name} ({time.monotonic() - started:.0f} s, "
                f"{usage.prompt_tokens}+{usage.completion_tokens} tokens)\n{text}",
                flush=True,
            )
        finally:
            await runtime.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--api-base", default=DEFAULT_API_BASE)
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--api-key", default="local")
    ap.add_argument("--prompt", default="cave", choices=PROMPTS)
    ap.add_argument("--tasks", default="", help="comma-separated task names or kinds")
    ap.add_argument("--show-request", action="store_true", help="print the newest message too")
    args = ap.parse_args(argv)
    asyncio.run(probe(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
