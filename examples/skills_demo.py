"""Agent Skills: the bundled `data-analysis` and `charts` skills on the penguins data.

Only the skills' names and descriptions are in the system prompt. The model calls
`activate_skill(name)`: the SKILL.md body comes back whole and the skill's
`injection.py` is imported at that moment, adding its helpers to the namespace.

    python examples/skills_demo.py            # scripted replies, live code
    CAVE_MODEL=... python examples/skills_demo.py
"""

from __future__ import annotations

import asyncio

import palmerpenguins
from _common import ROOT, pick_model, show

from cave_tui import CaveAgent
from cave_tui.runtime import IPythonRuntime, Variable
from cave_tui.skills import SkillDiscovery

SCRIPT = [
    "I'll load the two skills first.\n```python\n"
    "activate_skill('data-analysis')\nactivate_skill('charts')\n```",
    "```python\nprint(eda_report(penguins, 'penguins'))\n"
    "bar_chart(penguins, 'species', 'body_mass_g', agg='mean', title='Mean body mass (g)')\n```",
    "Penguins has 344 rows and 8 columns; 19 cells are missing (11 of them in `sex`). "
    "Flipper length and body mass are strongly correlated (r = 0.87). Gentoo penguins are "
    "the heaviest, about 5,076 g on average, against about 3,700 g for Adelie and Chinstrap.",
]


async def main() -> None:
    skills = SkillDiscovery.from_directory(ROOT / "skills")
    print("skills:", ", ".join(s.name for s in skills))
    runtime = IPythonRuntime(
        variables=[Variable("penguins", palmerpenguins.load_penguins(), "Palmer penguins")]
    )
    agent = CaveAgent(pick_model(SCRIPT), runtime=runtime, skills=skills, max_steps=6)
    async for event in agent.stream_events(
        "Explore the penguins data and chart the mean body mass by species."
    ):
        show(event)
    loaded = [s.name for s in skills if s.exports_loaded]
    print(f"\nskills whose injection.py was imported: {loaded or 'none'}")
    await runtime.stop()


if __name__ == "__main__":
    asyncio.run(main())
