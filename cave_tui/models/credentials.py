"""API keys held outside the process environment, handed to the model client per call.

The app takes them out of `os.environ` at start (`cave_tui.app.credentials`), so model code
running in process cannot read them; a `LiteLLMModel` given these `Credentials` passes the
ones its provider needs as litellm arguments (`api_key=`, `aws_access_key_id=`…). Without
`Credentials` a model reads the environment as litellm always does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


def litellm_argument(name: str) -> str:
    """The litellm argument that carries environment variable *name*: AWS's keep their own
    (`aws_secret_access_key=`), every provider's key is `api_key=`."""
    lowered = name.lower()
    return lowered if lowered.startswith("aws_") else "api_key"


@dataclass(frozen=True)
class Credentials:
    """Secret environment variables by name (values never shown in a repr)."""

    values: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self.values))

    def __contains__(self, name: object) -> bool:
        return name in self.values

    def __bool__(self) -> bool:
        return bool(self.values)

    def litellm_kwargs(self, needed: Iterable[str]) -> dict[str, str]:
        """litellm arguments for the variables a provider *needed* (litellm's missing keys)
        that are held here."""
        return {litellm_argument(n): self.values[n] for n in needed if n in self.values}
