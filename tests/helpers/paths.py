"""Where the checkout is, for tests that read its files (README, skills, examples, bench)."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
