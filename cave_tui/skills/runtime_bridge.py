"""How skills reach the runtime: `activate_skill(name)` and the full-body delivery.

`install_skills(agent)` (called by `Extensions.install`) binds
`activate_skill` in the agent's runtime. Calling it:

1. imports the skill's `injection.py` at that moment (never at discovery) and
   injects its `__exports__` through `runtime.inject`, so they show up in the next
   namespace description with their descriptions and can be retrieved;
2. records the activation. After the cell, the agent asks the bridge for an
   observation appendix (`after_cell`), which carries the SKILL.md body whole, as
   its own part after the shaped output: the `max_exec_output` cut never touches
   it. If the cell printed the body too, that copy is replaced by a one-line
   pointer so the body is neither cut nor sent twice.

In-process runtimes (`IPythonRuntime`) run the host's `activate_skill` directly, so
the helpers exist within the same cell. A process-isolated runtime cannot call
back into the host; it gets a small self-contained stub that prints a sentinel
line, and the bridge activates the skill on the host after the cell (the exports
then travel through `runtime.inject` and are usable from the next cell).
"""

from __future__ import annotations

import re
import secrets
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cave_tui.runtime.base import ExecutionResult
from cave_tui.runtime.bindings import unlisted_binding
from cave_tui.runtime.items import Function, Injectable, Variable
from cave_tui.skills.discovery import SkillDiscovery
from cave_tui.skills.errors import SkillError, SkillNotFoundError
from cave_tui.skills.registry import SkillRegistry
from cave_tui.skills.skill import Skill

ACTIVATE_NAME = "activate_skill"
BLOCK_START = "=== Skill '{name}' instructions (in full) ==="
BLOCK_END = "=== End of skill '{name}' instructions ==="
BLOCK_PREFIX = "=== Skill '"  # what compaction looks for to keep skill bodies
POINTER = "[instructions of skill '{name}': see the full text after this output]"


class SkillInstructions:
    """What `activate_skill` returns: `str()` is the full body, `repr()` a pointer.

    Not a `str` subclass, so a bare `activate_skill(...)` at the end of a cell
    displays the pointer (the body itself follows the output, whole), while
    `print(...)` prints the body, which the bridge then lifts out of the output.
    """

    def __init__(self, body: str, skill_name: str) -> None:
        self.text = body
        self.skill_name = skill_name

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return POINTER.format(name=self.skill_name)

    def __len__(self) -> int:
        return len(self.text)

    def __contains__(self, part: str) -> bool:
        return part in self.text

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SkillInstructions):
            return self.text == other.text
        return self.text == other

    def __hash__(self) -> int:
        return hash(self.text)


def skill_block(name: str, body: str) -> str:
    return f"{BLOCK_START.format(name=name)}\n{body.rstrip()}\n{BLOCK_END.format(name=name)}"


def _describe_exports(items: list[Injectable]) -> str:
    parts = []
    for item in items:
        parts.append(f"{item.name}()" if isinstance(item, Function) else item.name)
    return ", ".join(parts)


class SkillBridge:
    """Activation state for one agent's skills."""

    def __init__(self, agent: Any, skills: list[Skill]) -> None:
        self.agent = agent
        self.skills: dict[str, Skill] = {s.name: s for s in skills}
        runtime = agent.runtime
        declared = getattr(runtime, "in_process", None)
        if declared is None:
            from cave_tui.runtime.ipython import IPythonRuntime

            declared = isinstance(runtime, IPythonRuntime)
        self.in_process = bool(declared)
        self.nonce = secrets.token_hex(6)
        self._sentinel = re.compile(
            r"\u27eacave-skill:" + self.nonce + r":([^\u27eb\n]+)\u27eb\r?\n?"
        )
        self._lock = threading.Lock()
        self._pending: list[str] = []  # activated during the running cell
        self._bodies: dict[str, str] = {}  # body as delivered, per activated skill
        self._exported: dict[str, list[Injectable]] = {}

    # -- activation ----------------------------------------------------------------
    def lookup(self, name: Any) -> Skill:
        if not isinstance(name, str) or name not in self.skills:
            raise SkillNotFoundError(str(name), sorted(self.skills))
        return self.skills[name]

    def activate(self, name: str) -> SkillInstructions:
        """Inject the skill's exports now and queue its body for full delivery."""
        skill = self.lookup(name)
        with self._lock:
            first = skill.name not in self._exported
        if first:
            exports = skill.load_exports()  # imports injection.py: now, not at discovery
            for item in exports:
                item.by_host = True  # the skill's, not the user's (`given_names`)
                self.agent.runtime.inject(item)
            with self._lock:
                self._exported[skill.name] = exports
        body = skill.body_content
        with self._lock:
            self._bodies[skill.name] = body
            self._pending.append(skill.name)
        return SkillInstructions(body, skill.name)

    @property
    def activated(self) -> list[str]:
        with self._lock:
            return list(self._exported)

    def make_activate_function(self) -> Any:
        """The `activate_skill` bound in the runtime (host function, or a remote stub)."""
        if self.in_process:
            bridge = self

            def activate_skill(name: str) -> SkillInstructions:
                """Load a skill: its full instructions follow this cell's output, and its
                helper functions/variables/types are added to the namespace."""
                return bridge.activate(name)

            return activate_skill
        return self._remote_stub()

    def _remote_stub(self) -> Any:
        """A self-contained function (no reference to the host) for an isolated runtime.

        It carries the skills' bodies, so a cell run on the runtime alone gets the
        instructions back as in process (`str()` the body, `repr()` the pointer); the
        printed sentinel tells the bridge to activate the skill on the host after the cell.
        """
        bodies = {name: skill.body_content for name, skill in sorted(self.skills.items())}
        source = (
            "def activate_skill(name):\n"
            '    """Load a skill: its full instructions follow this cell\'s output, and its\n'
            '    helpers are added to the namespace for the next cell."""\n'
            f"    bodies = {bodies!r}\n"
            "    if name not in bodies:\n"
            "        raise LookupError('no skill named %r; available skills: %s'\n"
            "                          % (name, ', '.join(bodies) or '(none)'))\n"
            f"    print('\\u27eacave-skill:{self.nonce}:%s\\u27eb' % name)\n"
            "    class SkillInstructions:\n"
            "        def __str__(self):\n"
            "            return bodies[name]\n"
            "        def __repr__(self):\n"
            f"            return {POINTER!r}.format(name=name)\n"
            "        def __contains__(self, part):\n"
            "            return part in bodies[name]\n"
            "    return SkillInstructions()\n"
        )
        namespace: dict[str, Any] = {"__name__": "cave_skill_stub"}
        exec(compile(source, "<cave activate_skill>", "exec"), namespace)
        return namespace["activate_skill"]

    # -- after each cell -------------------------------------------------------------
    def after_cell(self, result: ExecutionResult) -> str:
        """Deliver the bodies of skills activated (or printed) by the cell, whole."""
        with self._lock:
            names = list(dict.fromkeys(self._pending))
            self._pending.clear()
        notes: list[str] = []
        if not self.in_process:
            names += [n for n in self._take_sentinels(result) if n not in names]
            for name in list(names):
                if name in self._exported:
                    continue
                try:
                    self.activate(name)
                    with self._lock:
                        self._pending.clear()
                except SkillError as exc:
                    names.remove(name)
                    notes.append(f"activate_skill({name!r}) failed: {exc}")
        # A body printed by the cell (`print(activate_skill(...))`, or later) is not
        # cut by the output limit: it is replaced by a pointer and delivered whole.
        output = result.output
        for name, body in list(self._bodies.items()):
            if body.strip() and body.strip() in output:
                output = output.replace(body.strip(), POINTER.format(name=name))
                if name not in names:
                    names.append(name)
        result.output = output
        blocks: list[str] = []
        for name in names:
            body = self._bodies.get(name, "")
            exports = self._exported.get(name, [])
            if self._already_shown(name):
                blocks.append(
                    f"[skill '{name}' is already active; its instructions appear earlier "
                    "in this conversation]"
                )
                continue
            block = skill_block(name, body)
            if exports:
                when = "" if self.in_process else " (usable from the next cell)"
                block += f"\nAdded to the namespace{when}: {_describe_exports(exports)}"
            blocks.append(block)
        blocks += notes
        return "".join("\n\n" + b for b in blocks)

    def _take_sentinels(self, result: ExecutionResult) -> list[str]:
        names = self._sentinel.findall(result.output)
        if names:
            result.output = self._sentinel.sub("", result.output)
        return list(dict.fromkeys(n.strip() for n in names))

    def _already_shown(self, name: str) -> bool:
        start = BLOCK_START.format(name=name)
        return any(start in str(m.get("content", "")) for m in self.agent.history)


def _coerce(item: Any) -> Skill:
    if isinstance(item, Skill):
        return item
    if isinstance(item, str | Path):
        return SkillDiscovery.from_file(item)
    raise TypeError(
        f"skills= takes Skill objects or paths to skill folders, not {type(item).__name__}"
    )


def coerce_skills(items: Iterable[Any]) -> list[Skill]:
    """Skills from `Skill` objects or paths; two skills with one name are an error."""
    skills: list[Skill] = []
    seen: dict[str, Skill] = {}
    for item in items:
        skill = _coerce(item)
        if skill.name in seen:
            where = f"{seen[skill.name].path or 'code'} and {skill.path or 'code'}"
            raise SkillError(f"two skills are named {skill.name!r}: {where}")
        seen[skill.name] = skill
        skills.append(skill)
    return skills


def bind_known_exports(runtime: Any, skills: list[Skill]) -> None:
    """Bind, all or nothing, the exports of *skills* known without importing anything (given
    in code, or from an `injection.py` already imported) as unlisted bindings: usable at once,
    as upstream 0.8 binds them at construction, but neither described nor listed until the
    skill is activated (`SkillBridge.activate` injects them then). A name already bound is a
    ValueError and nothing is bound. An `injection.py` not yet imported stays unimported."""
    bindings: list[Variable] = []
    for skill in skills:
        for item in skill.known_exports():
            existing = runtime.injected.get(item.name)
            if existing is not None and existing.value is item.value:
                continue  # bound by an earlier agent on this runtime
            bindings.append(unlisted_binding(item.name, item.value))
    if bindings:
        runtime.inject_resources(variables=bindings)


def install_skills(agent: Any) -> SkillBridge:
    """Bind `activate_skill` in *agent*'s runtime and hook full-body delivery."""
    skills = coerce_skills(agent.skills)
    agent.skills = skills
    bridge = SkillBridge(agent, skills)
    activate = Function(
        bridge.make_activate_function(),
        description="Load a skill's instructions and helpers",
        name=ACTIVATE_NAME,
    )
    activate.by_host = True  # the agent's tool, never named to the user as theirs
    bind_known_exports(agent.runtime, skills)
    agent.runtime.inject(activate)
    agent.extensions.result_hooks.append(bridge.after_cell)
    agent.extensions.skill_bridge = bridge
    # Upstream's agents keep their skills in `_skill_registry`, and upstream's skill
    # examples list them from there (`agent._skill_registry.list_skills()`).
    registry = SkillRegistry()
    registry.add_skills(skills)
    agent.extensions.skill_registry = registry
    return bridge
