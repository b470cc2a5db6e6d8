"""Agent effectiveness on a real model: the evaluation suite's runner.

    python bench/agent_eval.py                                  # all tasks, cave prompt
    python bench/agent_eval.py --prompt cave,upstream --label start
    python bench/agent_eval.py --tasks mt_adelie,object --repeat 3
    python bench/agent_eval.py --tasks holdout --list            # the held-out tasks

Runs every task of `eval_tasks.TASKS` (or those `--tasks` names; `holdout` is the held-out
set of eval_holdout.py, never in the default) against an OpenAI-compatible endpoint (default:
the local Qwen2.5-Coder-1.5B server of ../shared/local-llm on 127.0.0.1:8411) at temperature 0,
each task in a fresh IPythonRuntime with its objects injected, its user turns sent in order,
and a time cap on the whole task (the run is cancelled when it is reached). Then it retrieves
the named variables and checks them against pandas ground truth.

`--prompt upstream` runs the same agent with upstream CaveAgent's prompt instead of cave's:
its system instructions and template, the injected items rendered in the system prompt as
upstream renders them (`- name: x` / `  type: DataFrame` / `  description: ...`). Everything
else (model, server, observations, loop) is the same, so the difference is the prompt.

Per task and in total: success, steps, model calls, prompt/completion/cached tokens as the
server reported them (`AgentResponse.usage`), wall time. Writes
bench/results/agent_eval[_LABEL].json and prints tables; the transcripts go to
agent_eval[_LABEL]_transcripts.jsonl as each task ends (a long run can be read while it runs).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, report
from eval_public import ANSWER
from eval_tasks import Task, _pristine, check, data, select
from upstream_prompt import (
    UPSTREAM_INSTRUCTIONS,
    UPSTREAM_SYSTEM_INSTRUCTIONS,
    UPSTREAM_TEMPLATE,
    upstream_sections,
)

from cave_tui import CaveAgent
from cave_tui.agent import events as ev
from cave_tui.agent.messages import merge_consecutive
from cave_tui.models.base import Message, Model
from cave_tui.runtime import Function, IPythonRuntime, Type, Variable

PROMPTS = ("cave", "upstream")
DEFAULT_API_BASE = "http://127.0.0.1:8411/v1"
DEFAULT_MODEL = "openai/qwen2.5-coder-1.5b-instruct"


class UpstreamStyleAgent(CaveAgent):
    """CaveAgent prompted as upstream does: injected items described inside the system prompt."""

    def __init__(self, model: Model, runtime: Any, **kwargs: Any) -> None:
        super().__init__(
            model,
            runtime,
            instructions=UPSTREAM_INSTRUCTIONS,
            system_instructions=UPSTREAM_SYSTEM_INSTRUCTIONS,
            system_prompt_template=UPSTREAM_TEMPLATE,
            final_answer=False,  # not part of upstream's protocol (its prompt never offers it)
            **kwargs,
        )

    async def build_request(self) -> list[Message]:
        sections = upstream_sections(self.runtime.injected.values())
        system = self.system_prompt(sections)
        return merge_consecutive([{"role": "system", "content": system}, *self.history])


def make_agent(prompt: str, model: Model, runtime: Any, **kwargs: Any) -> CaveAgent:
    kwargs.setdefault("display", False)  # the eval reports results, not the conversation
    if prompt == "cave":
        return CaveAgent(model, runtime, **kwargs)
    if prompt == "upstream":
        return UpstreamStyleAgent(model, runtime, **kwargs)
    raise ValueError(f"unknown prompt {prompt!r}; use one of {', '.join(PROMPTS)}")


def make_runtime(task: Task) -> IPythonRuntime:
    items = task.inject(data())
    return IPythonRuntime(
        variables=[i for i in items if isinstance(i, Variable)],
        functions=[i for i in items if isinstance(i, Function)],
        types=[i for i in items if isinstance(i, Type)],
    )


@dataclass
class TaskRun:
    """The outcome of one task under one prompt: what the table and the JSON show."""

    task: str
    kind: str
    prompt: str
    repeat: int = 0
    success: bool = False
    checks: dict[str, str] = field(default_factory=dict)  # variable -> "ok" or the reason
    statuses: list[str] = field(default_factory=list)  # one per turn
    steps: int = 0
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    usage_reported: bool = True
    wall_s: float = 0.0
    timed_out: bool = False
    error: str | None = None
    policies: str = ""  # the --policies spec ("" for the agent's default)
    interventions: dict[str, int] = field(default_factory=dict)  # policy -> count

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


async def run_task(
    task: Task,
    model: Model,
    prompt: str = "cave",
    *,
    max_steps: int = 6,
    time_cap: float = 240.0,
    exec_timeout: float = 60.0,
    repeat: int = 0,
    transcript: dict[str, Any] | None = None,
    policies: str | None = None,
) -> TaskRun:
    """Run *task*'s turns on a fresh runtime, then check the variables it asks for."""
    run = TaskRun(task.name, task.kind, prompt, repeat)
    started = time.monotonic()
    runtime = make_runtime(task)
    options: dict[str, Any] = {"max_steps": max_steps, "max_exec_timeout": exec_timeout}
    if policies is not None:
        options["policies"] = policies
        run.policies = policies
    agent = make_agent(prompt, model, runtime, **options)
    pending: list[ev.UsageEvent] = []  # usage of the turn in progress, if it gets cancelled
    log: list[dict[str, Any]] = []  # every cell and intervention, rewound ones included
    answers: list[str] = []  # each turn's final answer (a closed-form task checks the last)

    def sink(event: ev.Event) -> None:
        if isinstance(event, ev.CodeEvent):
            log.append({"step": event.step, "code": event.code})
        elif isinstance(event, ev.ExecutionErrorEvent):
            log.append({"step": event.step, "error": event.error[-300:]})
        elif isinstance(event, ev.InterventionEvent):
            kind = event.kind.value
            log.append(
                {"step": event.step, "policy": event.policy, "kind": kind, "text": event.content}
            )
        elif isinstance(event, ev.UserEvent):
            log.append({"user": event.content})
        if isinstance(event, ev.UsageEvent):
            pending.append(event)
            run.usage_reported = run.usage_reported and event.reported
        elif isinstance(event, ev.StepEvent):
            run.steps += 1

    agent.add_event_sink(sink)

    async def turns() -> None:
        for text in task.turns:
            pending.clear()
            response = await agent.run(text)
            pending.clear()
            answers.append(response.content)
            run.statuses.append(response.status.value)
            for name, count in response.interventions.items():
                run.interventions[name] = run.interventions.get(name, 0) + count
            run.model_calls += response.usage.model_calls
            run.prompt_tokens += response.usage.prompt_tokens
            run.completion_tokens += response.usage.completion_tokens
            run.cached_tokens += response.usage.cached_tokens
            if response.error:
                run.error = response.error

    try:
        try:
            await asyncio.wait_for(turns(), time_cap)
        except TimeoutError:
            run.timed_out = True
            run.statuses.append("timed_out")
            run.model_calls += len(pending)
            run.prompt_tokens += sum(e.prompt_tokens for e in pending)
            run.completion_tokens += sum(e.completion_tokens for e in pending)
        except Exception as exc:  # the harness, not the model: report it, keep the suite going
            run.error = f"{type(exc).__name__}: {exc}"
        truth = task.truth(_pristine())
        for name, expected in truth.items():
            if name.startswith(ANSWER):  # a closed-form answer: checked on the final answer's text
                verdict = check(answers[-1] if answers else "", expected)
                run.checks[name] = "ok" if verdict.ok else verdict.reason
                continue
            try:
                actual = await runtime.retrieve(name)
            except KeyError:
                run.checks[name] = "not defined"
                continue
            verdict = check(actual, expected)
            run.checks[name] = "ok" if verdict.ok else verdict.reason
        run.success = (
            not run.timed_out and run.error is None and all(v == "ok" for v in run.checks.values())
        )
        if transcript is not None:
            request = await agent.build_request()
            transcript.update(
                task=task.name,
                prompt=prompt,
                repeat=repeat,
                system=request[0]["content"],
                history=list(agent.history),
                events=log,
                checks=run.checks,
            )
    finally:
        await runtime.stop()
        run.wall_s = round(time.monotonic() - started, 2)
    return run


async def run_suite(
    tasks: list[Task],
    model_for: Callable[[Task, str], Model],
    prompts: tuple[str, ...] = ("cave",),
    *,
    repeat: int = 1,
    max_steps: int = 6,
    time_cap: float = 240.0,
    exec_timeout: float = 60.0,
    progress: Callable[[TaskRun, dict[str, Any]], None] | None = None,
    policies: str | None = None,
) -> tuple[list[TaskRun], list[dict[str, Any]]]:
    """Every task under every prompt, *repeat* times; one prompt's tasks run together."""
    runs: list[TaskRun] = []
    transcripts: list[dict[str, Any]] = []
    for prompt in prompts:
        for r in range(repeat):
            for task in tasks:
                transcript: dict[str, Any] = {}
                run = await run_task(
                    task,
                    model_for(task, prompt),
                    prompt,
                    max_steps=max_steps,
                    time_cap=time_cap,
                    exec_timeout=exec_timeout,
                    repeat=r,
                    transcript=transcript,
                    policies=policies,
                )
                runs.append(run)
                transcripts.append(transcript)
                if progress is not None:
                    progress(run, transcript)
    return runs, transcripts


# -- summaries -------------------------------------------------------------------------------------


def _mean(values: list[float]) -> float:
    return round(statistics.fmean(values), 1) if values else 0.0


HELD_OUT = "held-out"


def group_of(run: TaskRun) -> str:
    """The group a run is totalled in: its prompt, apart for the held-out tasks."""
    return f"{run.prompt} {HELD_OUT}" if run.task.startswith("ho_") else run.prompt


def summarize(runs: list[TaskRun]) -> dict[str, dict[str, Any]]:
    """Totals per prompt (held-out tasks apart): success, tokens per task and per solved task."""
    out: dict[str, dict[str, Any]] = {}
    for prompt in dict.fromkeys(group_of(r) for r in runs):
        mine = [r for r in runs if group_of(r) == prompt]
        solved = [r for r in mine if r.success]
        out[prompt] = {
            "runs": len(mine),
            "solved": len(solved),
            "success_rate": round(len(solved) / len(mine), 3),
            "mean_prompt_tokens": _mean([r.prompt_tokens for r in mine]),
            "mean_prompt_tokens_solved": _mean([r.prompt_tokens for r in solved]),
            "mean_completion_tokens": _mean([r.completion_tokens for r in mine]),
            "mean_steps": _mean([r.steps for r in mine]),
            "mean_model_calls": _mean([r.model_calls for r in mine]),
            "mean_wall_s": _mean([r.wall_s for r in mine]),
            "total_wall_s": round(sum(r.wall_s for r in mine), 1),
            "timed_out": sum(r.timed_out for r in mine),
            "usage_reported": all(r.usage_reported for r in mine),
        }
    return out


def token_ratio(runs: list[TaskRun], arm: str = "cave", base: str = "upstream") -> dict[str, Any]:
    """Mean prompt tokens of *arm* on the tasks it solved, over *base*'s on the same tasks.

    Arms are `group_of()` groups: "cave held-out" against "upstream held-out" compares those.
    """
    by_key = {(group_of(r), r.task, r.repeat): r for r in runs}
    pairs = [
        (r, by_key[(base, r.task, r.repeat)])
        for r in runs
        if group_of(r) == arm and r.success and (base, r.task, r.repeat) in by_key
    ]
    both = [(a, b) for a, b in pairs if b.success]
    result: dict[str, Any] = {"pairs": len(pairs), "both_solved": len(both)}
    if pairs:
        result["ratio"] = round(
            statistics.fmean(a.prompt_tokens for a, _ in pairs)
            / max(statistics.fmean(b.prompt_tokens for _, b in pairs), 1),
            3,
        )
    if both:
        result["ratio_both_solved"] = round(
            statistics.fmean(a.prompt_tokens for a, _ in both)
            / max(statistics.fmean(b.prompt_tokens for _, b in both), 1),
            3,
        )
    return result


def format_run(run: TaskRun) -> str:
    ok = "yes" if run.success else "NO"
    failed = {k: v for k, v in run.checks.items() if v != "ok"}
    note = "; ".join(f"{k}: {v}" for k, v in failed.items())
    if run.timed_out:
        note = "time cap; " + note
    if run.error:
        note = f"error {run.error[:60]}; " + note
    statuses = ",".join(s.replace("max_steps_reached", "max") for s in run.statuses)
    return (
        f"{run.task:<24} {run.prompt:<8} {ok:<3} {run.steps:>5} {run.model_calls:>5} "
        f"{run.prompt_tokens:>7} {run.completion_tokens:>6} {run.cached_tokens:>7} "
        f"{run.wall_s:>7.1f}  {statuses:<28} {note[:90]}"
    )


HEADER = (
    f"{'task':<24} {'prompt':<8} {'ok':<3} {'steps':>5} {'calls':>5} {'prompt':>7} "
    f"{'compl':>6} {'cached':>7} {'wall s':>7}  {'turns':<28} failure"
)


def print_table(runs: list[TaskRun]) -> None:
    print(HEADER)
    for run in runs:
        print(format_run(run))


def report_rows(runs: list[TaskRun]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Rows for `_common.report()` (metric/value/target/ok) and the comparison figures."""
    totals = summarize(runs)
    rows: list[dict[str, Any]] = []
    for prompt, t in totals.items():
        rate = t["success_rate"]
        rows += [
            {
                "metric": f"{prompt}: tasks solved (of {t['runs']})",
                "value": t["solved"],
                "target": ">= 80%" if prompt == "cave" else None,
                "ok": rate >= 0.8 if prompt == "cave" else None,
            },
            {"metric": f"{prompt}: success rate", "value": rate},
            {"metric": f"{prompt}: mean prompt tokens per task", "value": t["mean_prompt_tokens"]},
            {
                "metric": f"{prompt}: mean prompt tokens per solved task",
                "value": t["mean_prompt_tokens_solved"],
            },
            {
                "metric": f"{prompt}: mean completion tokens per task",
                "value": t["mean_completion_tokens"],
            },
            {"metric": f"{prompt}: mean steps per task", "value": t["mean_steps"]},
            {
                "metric": f"{prompt}: mean wall time per task",
                "value": t["mean_wall_s"],
                "unit": "s",
            },
        ]
    comparison: dict[str, Any] = {}
    held_out = (f"cave {HELD_OUT}", f"upstream {HELD_OUT}")
    if set(held_out) <= set(totals):
        comparison[HELD_OUT] = token_ratio(runs, *held_out)
    if {"cave", "upstream"} <= set(totals):
        comparison.update(token_ratio(runs))
        if "ratio" in comparison:
            rows.append(
                {
                    "metric": "cave/upstream prompt tokens, tasks cave solved",
                    "value": comparison["ratio"],
                    "target": "<= 0.6",
                    "ok": comparison["ratio"] <= 0.6,
                }
            )
        if "ratio_both_solved" in comparison:
            rows.append(
                {
                    "metric": "cave/upstream prompt tokens, tasks both solved",
                    "value": comparison["ratio_both_solved"],
                }
            )
    return rows, {"totals": totals, "comparison": comparison}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--api-base", default=DEFAULT_API_BASE)
    ap.add_argument("--model", default=DEFAULT_MODEL, help="litellm model id")
    ap.add_argument("--api-key", default="local")
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--prompt", default="cave", help="cave, upstream, or both: cave,upstream")
    ap.add_argument(
        "--tasks", default="", help="comma-separated task names or kinds; holdout: held-out"
    )
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--max-steps", type=int, default=6, help="per user turn")
    ap.add_argument("--time-cap", type=float, default=240.0, help="seconds per task")
    ap.add_argument("--exec-timeout", type=float, default=60.0, help="seconds per cell")
    ap.add_argument("--label", default="", help="suffix of the results file name")
    ap.add_argument(
        "--policies",
        default=None,
        help="the agent's policies: a preset (guided, minimal, strict, off) or a spec such as "
        "guided,-tips (docs/policies.md); default: the agent's default preset",
    )
    ap.add_argument(
        "--continues-reply",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the server continues a reply the request ends with (llama.cpp's prefill), so a "
        "policy may begin the model's replies; default: yes for the default llama.cpp server",
    )
    ap.add_argument("--list", action="store_true", help="list the tasks and exit")
    ap.add_argument(
        "--merge",
        nargs="+",
        metavar="JSON",
        help="report saved runs together (arms run one after the other) instead of running",
    )
    args = ap.parse_args(argv)
    if args.policies is not None:
        from cave_tui.agent.policies import UnknownPolicyError, policy_names

        try:
            policy_names(args.policies)
        except UnknownPolicyError as exc:
            ap.error(str(exc))
    name = "agent_eval" + (f"_{args.label}" if args.label else "")
    if args.merge:
        runs = [
            TaskRun(**run)
            for path in args.merge
            for run in json.loads(Path(path).read_text())["runs"]
        ]
        print_table(runs)
        rows, figures = report_rows(runs)
        print()
        report(
            name,
            rows,
            {"config": {"merged": args.merge}, **figures, "runs": [r.to_dict() for r in runs]},
        )
        return 0

    try:
        tasks = select(args.tasks)
    except ValueError as exc:
        ap.error(str(exc))
    if args.list:
        for t in tasks:
            print(f"{t.name:<24} {t.kind:<10} turns={len(t.turns)} retrieve={','.join(t.retrieve)}")
        return 0
    prompts = tuple(p.strip() for p in args.prompt.split(",") if p.strip())
    for p in prompts:
        if p not in PROMPTS:
            ap.error(f"unknown prompt {p!r}; use {', '.join(PROMPTS)}")

    from cave_tui.models import LiteLLMModel

    model = LiteLLMModel(
        args.model,
        api_base=args.api_base,
        api_key=args.api_key,
        temperature=args.temperature,
        max_retries=2,
    )
    continues = args.continues_reply
    model.continues_reply = args.api_base == DEFAULT_API_BASE if continues is None else continues
    RESULTS.mkdir(parents=True, exist_ok=True)
    transcript_path = RESULTS / f"{name}_transcripts.jsonl"
    transcript_path.write_text("")

    def progress(run: TaskRun, transcript: dict[str, Any]) -> None:
        print(format_run(run), flush=True)
        with transcript_path.open("a") as f:  # as we go: a long run can be read while it runs
            f.write(json.dumps(transcript, default=str) + "\n")

    print(HEADER, flush=True)
    runs, _ = asyncio.run(
        run_suite(
            tasks,
            lambda task, prompt: model,
            prompts,
            repeat=args.repeat,
            max_steps=args.max_steps,
            time_cap=args.time_cap,
            exec_timeout=args.exec_timeout,
            progress=progress,
            policies=args.policies,
        )
    )
    rows, figures = report_rows(runs)
    config = {
        "model": args.model,
        "api_base": args.api_base,
        "temperature": args.temperature,
        "prompts": prompts,
        "tasks": [t.name for t in tasks],
        "repeat": args.repeat,
        "max_steps": args.max_steps,
        "time_cap": args.time_cap,
        "exec_timeout": args.exec_timeout,
        "policies": args.policies,
        "continues_reply": model.continues_reply,
    }
    print()
    report(name, rows, {"config": config, **figures, "runs": [r.to_dict() for r in runs]})
    print(f"-> {transcript_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
