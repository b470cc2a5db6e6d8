"""Shared fixtures. No test reaches the network: models are scripted or served on 127.0.0.1."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
