"""`source.prepare` sees exactly what IPython will run, checked against IPython itself."""

from __future__ import annotations

import pytest
from IPython.core.inputtransformer2 import TransformerManager

from cave_tui.runtime import IPythonRuntime
from cave_tui.security.source import magic_names, prepare
from tests.security.benign_everyday import ALL_BENIGN
from tests.security.corpus import CORPUS, SETUP

EXTRA = [
    "x = 1\n%time y = 2\n",
    "a = (1 +\n%2)\n",
    "s = '''\n!ls\n'''\n",
    ">>> x = 1\n>>> print(x)\n",
    "In [1]: x = 1\n",
    "\n\n    x = 1\n    y = 2\n",
    "x = \\\n%time 1\n",
    "print('a?')\n",
    "d = {'k': 1}; d['k']\n",
    "\tif x:\n\t\t!ls\n",
]


@pytest.mark.parametrize(
    "code", [e.code for e in CORPUS] + [b.code for b in ALL_BENIGN] + [SETUP] + EXTRA
)
def test_prepared_source_is_what_ipython_compiles(code):
    prepared = prepare(code)
    expected = TransformerManager().transform_cell(code)
    assert prepared.source == expected
    assert bool(prepared.rewrites) == (expected != _cleanup_only(code))


def _cleanup_only(code: str) -> str:
    manager = TransformerManager()
    lines = (code if code.endswith("\n") else code + "\n").splitlines(keepends=True)
    for transform in manager.cleanup_transforms:
        lines = transform(lines)
    return "".join(lines)


ONE_LINERS = [
    "ls", "ls -la", "cat /etc/passwd", "cd /tmp", "pwd", "env", "time", "who", "history",
    "ls = 1", "ls, x = 1, 2", "len", "print", "x", "df.head()", "history.tail(3)", "x + 1",
    "mkdir d", "rm -rf x", "pip install x", "timeit f()", "   ls", "lambda: 0", "pass",
]  # fmt: skip


@pytest.fixture(scope="module")
def shell():
    return IPythonRuntime().shell  # a real shell, automagic on, empty namespace


@pytest.mark.parametrize("line", ONE_LINERS)
def test_automagic_emulation_matches_a_real_shell(shell, line):
    """Where a real shell (empty namespace) makes a magic, prepare() reports it."""
    assert shell.automagic
    real = shell.transform_cell(line)
    became_magic = "get_ipython()" in real
    assert bool(prepare(line).automagic) == became_magic, real


def test_magic_names_include_aliases_and_kernel_magics():
    names = magic_names()
    assert {"ls", "cat", "rm", "cd", "env", "system", "sx", "run", "load", "less"} <= names
