"""Which model the app uses when the user named none: the embedded one, when it is installed.

`--model` wins; then `--gguf PATH` / config `local_model` (the embedded llama.cpp serving
that file); then the bundled embedded model when the `local` extra is installed. Config
`local_model = "off"` (or `CAVE_LOCAL_MODEL=off`) turns the automatic choice off.
"""

from __future__ import annotations

from cave_tui.app.config import Config

OFF = ("off", "none", "no", "false")


def local_model_installed() -> bool:
    """True when the bundled embedded model can run (its packages or its assembled file)."""
    from cave_tui.models.local.weights import bundled_available

    return bundled_available()


def model_spec(config: Config) -> str | None:
    """The model spec to build (see the module docstring), or None when there is none."""
    if config.model:
        return config.model
    local = config.local_model
    if local and local.lower() in OFF:
        return None
    if local:
        return f"local:{local}"
    return "local" if local_model_installed() else None
