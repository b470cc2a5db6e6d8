"""The `cave` command line: argument parsing and the non-interactive commands.

`main` is the console entry point: `cave --version` answers before typer or anything
else is imported; every other command line goes to `cave_tui.frontends.cli.main`.
"""

from __future__ import annotations

import sys


def main() -> None:
    """The `cave` command."""
    from cave_tui.frontends.cli.standard_streams import prepare_standard_streams

    prepare_standard_streams()  # closed descriptors, and a reader that goes away
    if sys.argv[1:] == ["--version"]:
        from cave_tui import __version__

        sys.stdout.write(f"cave {__version__}\n")
        return
    if "--plain" not in sys.argv[1:]:
        # Before anything slow is imported: Enter typed while cave starts must stay Enter
        # (frontends/tui/tty.py); the line front ends read no terminal in cooked mode.
        from cave_tui.frontends.tui.tty import hold_typed_input

        hold_typed_input()
    from cave_tui.frontends.cli.main import main as run

    try:
        run()
    finally:
        _skip_final_collection()


def _skip_final_collection() -> None:
    """Everything alive now is kept out of the collections Python runs as it exits: they
    walk every object the data libraries made (about 0.25 s of a `cave run`), to free memory
    the process is about to give back. Exit hooks and finalizers still run."""
    import gc

    gc.freeze()
