"""The one place a live `CaveAgent` is built (`build_agent`), with the skills it is given
(`load_skills`). Imports the agent loop only when called. Never imports Textual.

`prepare_agent` does what a build needs that does not wait on the runtime (the agent loop
imported, the skills found), so a start can do it while the runtime boots."""

from __future__ import annotations

from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class AgentParts:
    """What `prepare_agent` found: the skills, and the problems met finding them."""

    skills: list[Skill] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def prepare_agent(config: Config, skill_dirs: list[str] | tuple[str, ...] = ()) -> AgentParts:
    """The part of a build that needs no runtime: the agent loop imported and the skills of
    `config.skills` plus *skill_dirs* found (any thread; touches no runtime)."""
    import cave_tui.agent.core  # noqa: F401  (the import is most of a build's time)

    dirs = [*([config.skills] if config.skills else []), *skill_dirs]
    skills, problems = load_skills(dirs)
    return AgentParts(skills, problems)


def build_agent(
    config: Config,
    model: Model,
    runtime: Runtime,
    *,
    skill_dirs: list[str] | tuple[str, ...] = (),
    notices: list[str] | None = None,
    approve: Approver | None = None,
    parts: AgentParts | None = None,
) -> CaveAgent:
    """The one place a live `CaveAgent` is built: the config's step limit and skills
    (`config.skills` plus *skill_dirs*, or those *parts* found already); problems with
    skills go to *notices*. *approve*: the approval hook (`agent/approval.py`).
    """
    from cave_tui.agent import CaveAgent

    if parts is None:
        parts = prepare_agent(config, skill_dirs)
    skills = parts.skills
    if notices is not None:
        notices.extend(parts.problems)
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
