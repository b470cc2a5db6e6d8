"""The `cave` command line: argument parsing and the non-interactive commands."""
