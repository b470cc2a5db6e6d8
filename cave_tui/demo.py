"""`cave demo`: a scripted analysis of the Palmer penguins data, no API key needed.

The replies are what a model wrote for these questions; the code really runs in
a fresh runtime against the real data set (it ships on PyPI), so every number
on screen is computed live.
"""

from __future__ import annotations

import asyncio

from cave_tui.agent import CaveAgent
from cave_tui.models import ScriptedModel
from cave_tui.runtime import Variable

TURNS: list[tuple[str, list[str]]] = [
    (
        "Which species has the heaviest penguins on average? Keep the table as `by_species`.",
        [
            "Let me look at the frame first.\n\n```python\nprint(penguins.shape)\n"
            "print(penguins.isna().sum().to_dict())\n```",
            "```python\nby_species = (\n    penguins.dropna(subset=['body_mass_g'])\n"
            "    .groupby('species')['body_mass_g']\n    .agg(['mean', 'count'])\n"
            "    .sort_values('mean', ascending=False)\n    .round(1)\n)\nby_species\n```",
            "**Gentoo** penguins are the heaviest, at about 5,076 g on average "
            "(Chinstrap ≈ 3,733 g, Adelie ≈ 3,701 g). The table is in `by_species`.",
        ],
    ),
    (
        "How does flipper length relate to body mass within each species?",
        [
            "```python\ncorr = (\n    penguins.dropna()\n"
            "    .groupby('species')[['flipper_length_mm', 'body_mass_g']]\n"
            "    .corr().xs('flipper_length_mm', level=1)['body_mass_g']\n"
            "    .round(2)\n)\ncorr\n```",
            "Within every species, longer flippers go with heavier birds: the correlation "
            "is strongest for Gentoo and weaker for Adelie and Chinstrap (see `corr`).",
        ],
    ),
]


async def run_demo(speed: float = 1.0) -> int:
    from palmerpenguins import load_penguins

    from cave_tui.runtime.ipython import IPythonRuntime

    replies = [reply for _, script in TURNS for reply in script]
    model = ScriptedModel(replies, model_id="scripted:demo")
    runtime = IPythonRuntime(
        variables=[Variable("penguins", load_penguins(), "Palmer penguins, one row per bird")]
    )
    agent = CaveAgent(model, runtime, display=True)
    status = 0
    for task, _ in TURNS:
        response = await agent.run(task)
        if not response.completed:
            status = 1
        await asyncio.sleep(0.2 / max(speed, 0.01))
    await runtime.stop()
    return status
