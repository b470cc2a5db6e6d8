"""Agent Skills with functions: a smart-home skill whose helpers control devices.

Port of upstream CaveAgent's `examples/skill_smart_home.py` (same scenario; only the
import differs). Activating `skills/smart-home` injects `get_status`, `set_light`,
`set_door` and `set_tv` (its `injection.py`). The model comes from LLM_MODEL_ID,
LLM_API_KEY and LLM_BASE_URL.
"""

import asyncio
import os
from pathlib import Path

from cave_tui import CaveAgent
from cave_tui.models import LiteLLMModel
from cave_tui.skills import SkillDiscovery

QUERIES = [
    "What's the status of all the lights?",
    "Turn on the living room light to 70% brightness",
    "Is the front door locked?",
    "Lock the garage door and turn off the kitchen light",
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

    print("=== Smart Home Assistant ===\n")
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
