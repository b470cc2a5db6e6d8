"""Theme files (TOML, one Textual theme each) bundled with cave."""
