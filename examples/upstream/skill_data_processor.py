"""Agent Skills with an injection module: a sales-analysis skill brings its own data.

Port of upstream CaveAgent's `examples/skill_data_processor.py` (same scenario; only
the import differs). Activating `skills/data-processor` injects `sales_data` and
`regional_targets` (its `injection.py`). The model comes from LLM_MODEL_ID,
LLM_API_KEY and LLM_BASE_URL.
"""

import asyncio
import os
from pathlib import Path

from cave_tui import CaveAgent
from cave_tui.models import LiteLLMModel
from cave_tui.skills import SkillDiscovery

QUERIES = [
    "How are our overall sales doing?",
    "How is the north region performing against target?",
    "Calculate the commissions for electronics sales.",
]


async def main():
    model = LiteLLMModel(
        model_id=os.getenv("LLM_MODEL_ID"),
        api_key=os.getenv("LLM_API_KEY"),
        base_url=os.getenv("LLM_BASE_URL"),
        custom_llm_provider="openai",
    )
    skills = SkillDiscovery.from_directory(Path(__file__).parent / "skills")
    agent = CaveAgent(model=model, skills=skills)

    print("=== Sales Analysis Assistant ===\n")
    print("Available skills:")
    for skill in skills:
        print(f"  - {skill.name}: {skill.description}")
    print()

    for query in QUERIES:
        print(f"User: {query}")
        response = await agent.run(query)
        print(f"Assistant: {response.content}\n")


if __name__ == "__main__":
    asyncio.run(main())
