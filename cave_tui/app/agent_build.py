"""The one place a live `CaveAgent` is built (`build_agent`), with the skills it is given
(`load_skills`). Imports the agent loop only when called. Never imports Textual."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cave_tui.app.config import Config

if TYPE_CHECKING:
    from cave_tui.agent import CaveAgent
    from cave_tui.agent.approval import Approver
    from cave_tui.models.base import Model
    from cave_tui.runtime.base import Runtime
    from cave_tui.skills import Skill


def load_skills(directories: list[str] | tuple[str, ...] = ()) -> tuple[list[Skill], list[str]]:
    """Skills from the default folders (./skills, the user config dir's skills/, the bundled
    ones) plus *directories*, and the problems found: a missing folder or a bad skill is a
    notice, never a failed start.
    """
    from cave_tui.skills import discover_skills

    problems: list[str] = []
    extra: list[str] = []
    for directory in directories:
        path = str(Path(directory).expanduser())
        if Path(path).is_dir():
            extra.append(path)
        else:
            problems.append(f"skills directory not found: {path}")
    try:
        found = discover_skills(extra)
    except Exception as exc:
        return [], [*problems, f"could not load skills: {type(exc).__name__}: {exc}"]
    return list(found.skills), [*problems, *(f"skill skipped: {e}" for e in found.errors)]


def build_agent(
    config: Config,
    model: Model,
    runtime: Runtime,
    *,
    skill_dirs: list[str] | tuple[str, ...] = (),
    notices: list[str] | None = None,
    approve: Approver | None = None,
) -> CaveAgent:
    """The one place a live `CaveAgent` is built: the config's step limit and skills
    (`config.skills` plus *skill_dirs*); problems with skills go to *notices*.
    *approve*: the approval hook (`agent/approval.py`).
    """
    from cave_tui.agent import CaveAgent

    dirs = [*([config.skills] if config.skills else []), *skill_dirs]
    skills, problems = load_skills(dirs)
    if notices is not None:
        notices.extend(problems)
    # Front ends draw the events themselves: the agent's own terminal rendering stays off.
    return CaveAgent(
        model,
        runtime,
        max_steps=config.max_steps,
        policies=config.policies,
        skills=skills,
        display=False,
        approve=approve,
    )
