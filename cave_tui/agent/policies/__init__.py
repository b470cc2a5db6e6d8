"""The agent's policy layer: every aid that intervenes in a turn, one module each.

`CaveAgent(policies=...)` takes a preset ("guided", "minimal", "off", "strict"), a
spec such as "guided,-tips", or a list of names and `AgentPolicy` objects.
"""

from cave_tui.agent.policies.base import (
    AgentPolicy,
    BasePolicy,
    Intervention,
    InterventionKind,
)
from cave_tui.agent.policies.pipeline import PolicyPipeline
from cave_tui.agent.policies.presets import (
    DEFAULT_PRESET,
    POLICY_CLASSES,
    POLICY_NAMES,
    PRESETS,
    UnknownPolicyError,
    describe_policies,
    policy_names,
    resolve_policies,
)

__all__ = [
    "DEFAULT_PRESET",
    "POLICY_CLASSES",
    "POLICY_NAMES",
    "PRESETS",
    "AgentPolicy",
    "BasePolicy",
    "Intervention",
    "InterventionKind",
    "PolicyPipeline",
    "UnknownPolicyError",
    "describe_policies",
    "policy_names",
    "resolve_policies",
]
