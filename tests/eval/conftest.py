"""The evaluation suite lives in bench/ (run by hand); its tests import it from there."""

from __future__ import annotations

import sys

from tests.helpers.paths import REPO_ROOT

BENCH = REPO_ROOT / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
