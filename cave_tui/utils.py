"""Upstream 0.8's `cave_agent.utils`: `sanitize_surrogates` (cave's, in `runtime/capture.py`)."""

from __future__ import annotations

from cave_tui.runtime.capture import sanitize_surrogates

__all__ = ["sanitize_surrogates"]
