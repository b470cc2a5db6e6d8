"""Agent Skills (agentskills.io): discovery, validation and activation in the runtime.

Headless and light: importing this package loads neither IPython nor the YAML
parser; those load when a skill file is parsed or a skill is installed.
"""

from cave_tui.skills.discovery import (
    DiscoveryResult,
    SkillDiscovery,
    bundled_skills_dir,
    default_skill_dirs,
    discover_skills,
    user_skills_dir,
)
from cave_tui.skills.errors import (
    SkillError,
    SkillInjectionError,
    SkillNotFoundError,
    SkillValidationError,
)
from cave_tui.skills.registry import SkillRegistry
from cave_tui.skills.skill import Skill

__all__ = [
    "DiscoveryResult",
    "Skill",
    "SkillDiscovery",
    "SkillError",
    "SkillInjectionError",
    "SkillNotFoundError",
    "SkillRegistry",
    "SkillValidationError",
    "bundled_skills_dir",
    "default_skill_dirs",
    "discover_skills",
    "user_skills_dir",
]
