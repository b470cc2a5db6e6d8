"""Single-aid ablation: each policy of a preset switched off in turn, on the tasks it acted in.

    python bench/ablation.py --baseline bench/results/agent_eval_LABEL.json --repeat 2
    python bench/ablation.py --baseline ... --only rewind,error_hints --dry-run

A policy changes a run only where it intervenes: one that never acted in a task left every
request and every cell of that task as they were (each refusal, hint, doubt, keep and rewind is
an `intervention` the eval counts). So the arm `PRESET,-NAME` is run only on the tasks where
NAME acted in the baseline run (`agent_eval.py --policies PRESET`), with the same repeats, and
compared with the baseline on those tasks. A policy that acted nowhere has no measured effect
here. Writes bench/results/ablation[_LABEL].json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import agent_eval
from _common import RESULTS, report

from cave_tui.agent.policies import policy_names


def acted_in(runs: list[dict[str, Any]], policy: str) -> list[str]:
    """Tasks (in run order) where *policy* intervened at least once in any repeat."""
    return list(dict.fromkeys(r["task"] for r in runs if r["interventions"].get(policy)))


def solved(runs: list[dict[str, Any]], tasks: list[str]) -> int:
    return sum(1 for r in runs if r["task"] in tasks and r["success"])


def finished(runs: list[dict[str, Any]], tasks: list[str]) -> tuple[float, float]:
    """(mean model calls, share of turns that ended with an answer) over *tasks*' runs."""
    mine = [r for r in runs if r["task"] in tasks]
    turns = [s for r in mine for s in r["statuses"]]
    calls = sum(r["model_calls"] for r in mine) / max(len(mine), 1)
    return calls, sum(s == "completed" for s in turns) / max(len(turns), 1)


def tokens_per_task(runs: list[dict[str, Any]], tasks: list[str]) -> float:
    """Mean prompt + completion tokens per run of *tasks* (what a task costs)."""
    mine = [r for r in runs if r["task"] in tasks]
    used = sum(r["prompt_tokens"] + r["completion_tokens"] for r in mine)
    return used / max(len(mine), 1)


def verdict(
    base: float, without: float, cost: tuple[float, float], cost_without: tuple[float, float]
) -> str:
    """From the success rates with and without the policy, on the tasks it acted in; at equal
    success, from the calls and the turns that end with an answer."""
    if without < base:
        return "earns its place"
    if without > base:
        return "costs tasks"
    if cost_without[1] < cost[1] or cost_without[0] > 1.2 * cost[0]:
        return "earns its place: same tasks, fewer calls or turns that end"
    return "no measured effect"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--baseline", required=True, help="agent_eval JSON of the preset's run")
    ap.add_argument("--repeat", type=int, default=None, help="default: the baseline's")
    ap.add_argument("--only", default="", help="comma-separated policies (default: all)")
    ap.add_argument("--label", default="")
    ap.add_argument("--dry-run", action="store_true", help="print the arms and exit")
    ap.add_argument("--reuse", action="store_true", help="read arms already run, run the others")
    args, passthrough = ap.parse_known_args(argv)  # the rest goes to agent_eval.py

    baseline = json.loads(Path(args.baseline).read_text())
    runs = [r for r in baseline["runs"] if r.get("prompt", "cave") == "cave"]
    preset = baseline["config"].get("policies") or "guided"
    repeat = args.repeat or int(baseline["config"].get("repeat", 1))
    wanted = [n.strip() for n in args.only.split(",") if n.strip()] or policy_names(preset)
    arms: list[dict[str, Any]] = []
    for policy in wanted:
        tasks = acted_in(runs, policy)
        arm: dict[str, Any] = {
            "policy": policy,
            "tasks": tasks,
            "interventions": sum(r["interventions"].get(policy, 0) for r in runs),
            "baseline_solved": solved(runs, tasks),
            "baseline_runs": sum(1 for r in runs if r["task"] in tasks),
        }
        arms.append(arm)
        print(f"{policy:<18} acted in {len(tasks)} task(s): {', '.join(tasks) or '-'}", flush=True)
        if args.dry_run or not tasks:
            continue
        label = f"ablate_{policy}" + (f"_{args.label}" if args.label else "")
        spec = f"{preset},-{policy}"
        arm_args = ["--tasks", ",".join(tasks), "--policies", spec, "--label", label]
        if not (args.reuse and (RESULTS / f"agent_eval_{label}.json").exists()):
            agent_eval.main([*passthrough, *arm_args, "--repeat", str(repeat)])
        arm_runs = json.loads((RESULTS / f"agent_eval_{label}.json").read_text())["runs"]
        arm["without_solved"] = solved(arm_runs, tasks)
        arm["without_runs"] = len(arm_runs)
        arm["calls_and_ended"] = finished(runs, tasks)
        arm["calls_and_ended_without"] = finished(arm_runs, tasks)
        arm["tokens_per_task"] = tokens_per_task(runs, tasks)
        arm["tokens_per_task_without"] = tokens_per_task(arm_runs, tasks)
        arm["verdict"] = verdict(
            arm["baseline_solved"] / arm["baseline_runs"],
            arm["without_solved"] / len(arm_runs),
            arm["calls_and_ended"],
            arm["calls_and_ended_without"],
        )
    if args.dry_run:
        return 0

    print()
    header = f"{'policy':<18} {'acted':>5} {'tasks':>5} {'with':>9} {'without':>9}"
    print(f"{header} {'calls with/without':>19} {'tokens with/without':>20}  verdict")
    for arm in arms:
        runs_n = arm["baseline_runs"]
        with_ = f"{arm['baseline_solved']}/{runs_n}" if runs_n else "-"
        without = (
            f"{arm['without_solved']}/{arm['without_runs']}" if "without_solved" in arm else "-"
        )
        calls = tokens = "-"
        if "calls_and_ended" in arm:
            calls = f"{arm['calls_and_ended'][0]:.1f}/{arm['calls_and_ended_without'][0]:.1f}"
            tokens = f"{arm['tokens_per_task']:.0f}/{arm['tokens_per_task_without']:.0f}"
        said = arm.get("verdict", "never acted: no effect in these runs")
        print(
            f"{arm['policy']:<18} {arm['interventions']:>5} {len(arm['tasks']):>5} {with_:>9} "
            f"{without:>9} {calls:>19} {tokens:>20}  {said}"
        )
    rows = [
        {
            "metric": f"{arm['policy']}: solved without it, of {arm['without_runs']} "
            f"(with it: {arm['baseline_solved']} of {arm['baseline_runs']})",
            "value": arm["without_solved"],
        }
        for arm in arms
        if "without_solved" in arm
    ]
    name = "ablation" + (f"_{args.label}" if args.label else "")
    report(
        name,
        rows,
        {"config": {"baseline": args.baseline, "preset": preset, "repeat": repeat}, "arms": arms},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
