"""The front ends, side by side: `cli` (typer commands), `tui` (Textual), `repl` (`--plain`).

Each imports the application layer (`cave_tui.app`) and the core, never another front end
(the command line starts the other two through their entry functions, imported lazily).
"""
