"""The `cave` command line (typer).

`cave --version` is answered before typer or anything heavy is imported, and
every subcommand imports what it needs inside its body, so `--help` stays fast.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated, Any

import typer

from cave_tui import __version__
from cave_tui.cli_data import DataOptions, data_options, normalize_argv, register_data_commands

app = typer.Typer(
    name="cave",
    help="A terminal workbench for an LLM agent that works on live Python objects.",
    add_completion=False,
    no_args_is_help=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model", "-m", help="litellm model id, or scripted:FILE (a YAML list of replies)."
    ),
]
ApiBaseOpt = Annotated[
    str | None, typer.Option("--api-base", help="Base URL of an OpenAI-compatible server.")
]
PolicyOpt = Annotated[
    str, typer.Option("--policy", help="Security policy: trusted, standard or strict.")
]
KernelOpt = Annotated[
    bool, typer.Option("--kernel", help="Run code in an isolated Jupyter kernel.")
]
MaxStepsOpt = Annotated[int, typer.Option("--max-steps", help="Model calls allowed per turn.")]
SkillsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--skills",
        help="A folder of Agent Skills (repeatable). ./skills, the user config dir's "
        "skills/ and the bundled skills are always searched.",
    ),
]


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"cave {__version__}")
        raise typer.Exit()


def build_model(spec: str | None, api_base: str | None) -> Any:
    from cave_tui.models import model_from_spec

    if not spec:
        raise typer.BadParameter(
            "no model configured: pass --model (or try `cave demo`)", param_hint="--model"
        )
    try:
        return model_from_spec(spec, api_base=api_base)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--model") from None


def load_skills(extra: list[str] | None) -> list[Any]:
    """Discover skills; report each bad one on stderr and carry on without it."""
    from cave_tui.skills import discover_skills

    found = discover_skills(extra or [])
    for error in found.errors:
        typer.echo(f"warning: skill skipped: {error}", err=True)
    return found.skills


def build_runtime(kernel: bool, policy: str) -> Any:
    checker = None
    if policy != "trusted":
        try:
            from cave_tui.security import SecurityChecker

            checker = SecurityChecker.for_policy(policy)
        except (ImportError, AttributeError):
            checker = None
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--policy") from None
    if kernel:
        from cave_tui.runtime import IPyKernelRuntime

        return IPyKernelRuntime(security_checker=checker)
    from cave_tui.runtime.ipython import IPythonRuntime

    return IPythonRuntime(security_checker=checker)


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Open cave. Subcommands: run (one task), demo (no API key needed)."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())


@app.command()
@data_options
def run(
    task: Annotated[str, typer.Argument(help="The task for the agent.")],
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
    policy: PolicyOpt = "standard",
    kernel: KernelOpt = False,
    max_steps: MaxStepsOpt = 10,
    skills: SkillsOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print events as JSON lines.")] = False,
    data: DataOptions | None = None,
) -> None:
    """Run one task, recorded as a session: exit 0 on a final answer, 1 on max steps, 2 on error."""
    from cave_tui.agent import CaveAgent
    from cave_tui.cli_data import run_task

    agent = CaveAgent(
        build_model(model, api_base),
        build_runtime(kernel, policy),
        max_steps=max_steps,
        display=not as_json,
        skills=load_skills(skills),
    )
    raise typer.Exit(asyncio.run(run_task(agent, task, as_json, data or DataOptions())))


@app.command()
def demo(
    speed: Annotated[float, typer.Option("--speed", help="Replay speed factor.")] = 1.0,
) -> None:
    """Replay the bundled NYC flights analysis: recorded replies, live code, no API key."""
    from cave_tui.demo import run_demo

    raise typer.Exit(asyncio.run(run_demo(speed=speed)))


register_data_commands(app)


def main() -> None:
    # Fast path: answer --version without importing anything else.
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(f"cave {__version__}\n")
        return
    sys.argv[1:] = normalize_argv(sys.argv[1:])
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
