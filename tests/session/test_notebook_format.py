"""`nbformat()` imports nbformat without the IRI grammars (seconds of CPU), and notebooks
are still validated, and the package stays importable for whoever else wants it."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from cave_tui.session.notebook_format import nbformat
nbf = nbformat()
nb = nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell("1 + 1")])
nbf.validate(nb)
bad = nbf.v4.new_notebook()
bad.cells.append({"cell_type": "code"})
try:
    nbf.validate(bad)
except nbf.ValidationError:
    print("invalid refused")
print("iri grammars built:", "rfc3987_syntax" in sys.modules)
print("left blocked:", sys.modules.get("rfc3987_syntax", ...) is None)
import rfc3987_syntax
print("importable after:", callable(rfc3987_syntax.is_valid_syntax))
"""


def test_nbformat_is_imported_without_the_iri_grammars_and_still_validates() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [
        "invalid refused",
        "iri grammars built: False",
        "left blocked: False",
        "importable after: True",
    ]
