"""`nbformat`, imported without jsonschema's optional IRI format checks.

jsonschema registers its `iri` checks when `rfc3987_syntax` is installed, and importing that
package builds 38 Lark grammars: 2 to 3 CPU-seconds before the first notebook is written.
The notebook schema uses no IRI format, so validating a notebook is the same without it.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

_IRI_SYNTAX = "rfc3987_syntax"


def nbformat() -> ModuleType:
    """The `nbformat` module; its first import skips `rfc3987_syntax` when jsonschema is new."""
    loaded = sys.modules.get("nbformat")
    if loaded is not None:
        return loaded
    skip = "jsonschema" not in sys.modules and _IRI_SYNTAX not in sys.modules
    if skip:
        sys.modules[_IRI_SYNTAX] = None  # type: ignore[assignment]  # its import raises ImportError
    try:
        return importlib.import_module("nbformat")
    finally:
        if skip and sys.modules.get(_IRI_SYNTAX, ...) is None:
            del sys.modules[_IRI_SYNTAX]
