"""Upstream 0.8's `cave_agent.models.errors`: any provider exception as a typed
`ModelError` (`classify_provider_error`), cave's classification (`models/failures.py`)."""

from __future__ import annotations

from cave_tui.models.base import ModelError
from cave_tui.models.failures import classify


def classify_provider_error(error: BaseException) -> ModelError:
    """*error* as a `ModelError` (0.8's `ProviderError`): a `PromptTooLongError`, a
    `ProviderBillingError`, or one whose `kind` says whether a retry can help. A
    `ModelError` comes back as it is."""
    return classify(error)


__all__ = ["classify_provider_error"]
