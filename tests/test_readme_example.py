"""The README's library example runs as written."""

import re
import subprocess
import sys

from tests.helpers.paths import REPO_ROOT

ROOT = REPO_ROOT


def test_readme_python_example_runs():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```$", readme, re.S | re.M)
    example = next(b for b in blocks if "asyncio.run(main())" in b)
    result = subprocess.run(
        [sys.executable, "-c", example], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert "[2, 6, 10, 16]" in result.stdout
    assert "completed 2" in result.stdout
