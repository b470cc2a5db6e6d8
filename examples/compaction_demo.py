"""Context compaction: a long analysis in a deliberately small context window.

`context_window=1200` makes the agent compact early. Watch the `compacting` and
`compacted` lines: old cell outputs are cleared first (tier 1), then older
messages are summarised by the model (tier 2). The Python session is never
touched, so every variable made before compaction is still there afterwards,
and the summariser's calls are counted in the usage.

    python examples/compaction_demo.py        # scripted replies, live code
    CAVE_MODEL=... python examples/compaction_demo.py
"""

from __future__ import annotations

import asyncio

import palmerpenguins
from _common import ScriptWithSummaries, real_model, show

from cave_tui import CaveAgent
from cave_tui.runtime import IPythonRuntime, Variable

QUESTIONS = [
    "Describe every numeric column of penguins (describe()) and keep it as `stats`.",
    "Count penguins per species and island into `counts` and show it.",
    "Mean bill length per species and sex into `bills`; show it.",
    "Which species has the longest flippers on average? Keep the table as `flippers`.",
    "Median body mass per island into `mass`.",
    "How many rows have no `sex`? Keep them as `unsexed`.",
    "Remind me: which variables have we made so far?",
]

SCRIPT = [
    "```python\nstats = penguins.describe()\nprint(stats)\n```",
    "`stats` holds the summary of the five numeric columns.",
    "```python\ncounts = penguins.groupby(['species', 'island']).size()\nprint(counts)\n```",
    "Adelie live on all three islands; Gentoo only on Biscoe, Chinstrap only on Dream.",
    "```python\nbills = penguins.groupby(['species', 'sex'])['bill_length_mm'].mean()\n"
    "print(bills.round(2))\n```",
    "Males have longer bills than females in every species; Chinstrap males are longest.",
    "```python\nflippers = penguins.groupby('species')['flipper_length_mm'].mean()\n"
    "print(flippers.sort_values())\n```",
    "Gentoo penguins have the longest flippers, about 217 mm on average.",
    "```python\nmass = penguins.groupby('island')['body_mass_g'].median()\nprint(mass)\n```",
    "Biscoe penguins are the heaviest (median 4,775 g), as most Gentoo live there.",
    "```python\nunsexed = penguins[penguins['sex'].isna()]\nprint(len(unsexed))\n```",
    "11 rows have no `sex`; they are in `unsexed`.",
    "So far: `stats`, `counts`, `bills`, `flippers`, `mass` and `unsexed`, all still live.",
]
SUMMARIES = [
    "<analysis>Going through the turns in order.</analysis>\n<summary>\n"
    "The user is exploring `penguins`. Made so far: `stats` (describe() of the numeric "
    "columns) and `counts` (penguins per species and island: Gentoo only on Biscoe, "
    "Chinstrap only on Dream, Adelie everywhere).\n</summary>"
] * 4


async def main() -> None:
    model = real_model() or ScriptWithSummaries(SCRIPT, SUMMARIES)
    runtime = IPythonRuntime(
        variables=[Variable("penguins", palmerpenguins.load_penguins(), "Palmer penguins")]
    )
    # The scripted replies answer in plain text, so the demo does without final_answer().
    agent = CaveAgent(model, runtime=runtime, context_window=1200, max_steps=6, final_answer=False)
    agent.compactor.keep_results = 2  # keep only the last two cell outputs in tier 1
    agent.compactor.tail_ratio = 0.4  # a summary keeps a shorter verbatim tail
    agent.compactor.breaker.cooldown = 60  # seconds before retrying a failing summariser
    total_calls = 0
    for question in QUESTIONS:
        async for event in agent.stream_events(question):
            show(event)
        total_calls = agent.usage.model_calls
        print()
    print(f"history: {len(agent.history)} messages after {agent.compactor.compactions} compactions")
    print(f"model calls (summaries included): {total_calls}; tokens: {agent.usage.total_tokens:,}")
    names = await runtime.names()
    print("still live in the session:", ", ".join(names))
    await runtime.stop()


if __name__ == "__main__":
    asyncio.run(main())
