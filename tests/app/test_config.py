"""Settings: file < CAVE_* env < flags; bad values reported, never fatal; keys never read."""

from __future__ import annotations

import pytest

from cave_tui.app.config import Config, config_path, load_config, save_setting


def write(text: str) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_defaults_without_a_file():
    config = load_config()
    # The tests' environment turns the embedded model off and runs code in process, and a
    # kernel unsandboxed.
    assert config == Config(local_model="off", kernel=False, sandbox=False)
    assert config.warnings == [] and config.source("policy") == "default"


def test_the_default_runtime_is_the_kernel_with_a_memory_limit(monkeypatch):
    monkeypatch.delenv("CAVE_KERNEL")
    config = load_config()
    assert config.kernel is True and config.source("kernel") == "default"
    assert config.memory_limit == "auto" and config.runtime_memory_limit == "auto"
    assert load_config({"kernel": False}).kernel is False  # --in-process
    assert load_config({"memory_limit": "off"}).runtime_memory_limit is None
    assert load_config({"memory_limit": "0"}).runtime_memory_limit is None
    assert load_config({"memory_limit": "2G"}).runtime_memory_limit == "2G"
    bad = load_config({"memory_limit": "lots"})
    assert bad.memory_limit == "auto" and "memory_limit must be" in bad.warnings[0]


def test_file_then_env_then_flags(monkeypatch):
    write('model = "openai/gpt-4o-mini"\npolicy = "strict"\ntheme = "cave-light"\nmax_steps = 4\n')
    config = load_config()
    assert (config.model, config.policy, config.theme, config.max_steps) == (
        "openai/gpt-4o-mini",
        "strict",
        "cave-light",
        4,
    )
    assert config.source("policy") == "file"
    monkeypatch.setenv("CAVE_POLICY", "trusted")
    monkeypatch.setenv("CAVE_KERNEL", "yes")
    config = load_config()
    assert config.policy == "trusted" and config.kernel is True
    assert config.source("policy") == "env"
    config = load_config({"policy": "standard", "model": None, "max_steps": 7})
    assert config.policy == "standard" and config.source("policy") == "flag"
    assert config.model == "openai/gpt-4o-mini"  # a None flag does not override
    assert config.max_steps == 7


def test_bad_values_are_reported_and_defaults_kept(monkeypatch):
    write('policy = "loose"\nmax_steps = "many"\nkernel = "perhaps"\ncolour = "red"\n')
    monkeypatch.setenv("CAVE_APPROVE", "sometimes")
    config = load_config()
    assert config.policy == "standard" and config.max_steps == 10 and config.kernel is False
    assert config.source("kernel") == "env"  # the tests' in-process setting, kept
    assert config.approve == "auto"
    text = "\n".join(config.warnings)
    for fragment in (
        "policy must be one of",
        "max_steps must be a whole number",
        "kernel must be",
        "unknown setting 'colour'",
        "approve must be auto or ask",
    ):
        assert fragment in text


def test_invalid_toml_is_reported():
    write("model = [unclosed\n")
    config = load_config()
    assert config == Config(local_model="off", kernel=False, sandbox=False)
    assert "not valid TOML" in config.warnings[0]


def test_api_keys_are_never_read_from_the_file():
    write('openai_api_key = "sk-secret"\nmodel = "x"\n')
    config = load_config()
    assert config.model == "x"
    assert "sk-secret" not in repr(config)
    assert "API keys are read only from the environment" in config.warnings[0]


def test_keymap_table():
    write('[keymap]\n"cave.help" = "f9"\n"cave.quit" = "ctrl+x"\n')
    assert load_config().keymap == {"cave.help": "f9", "cave.quit": "ctrl+x"}
    write("keymap = 3\n")
    assert "[keymap] must map" in load_config().warnings[0]


def test_save_setting_keeps_comments_and_other_settings():
    write('# my settings\nmodel = "x"  # the model\n\n[keymap]\n"cave.help" = "f9"\n')
    save_setting("theme", "cave-light")
    text = config_path().read_text()
    assert "# my settings" in text and "# the model" in text and '"cave.help" = "f9"' in text
    assert load_config().theme == "cave-light"
    save_setting("theme", "cave-dark")
    assert load_config().theme == "cave-dark"
    with pytest.raises(ValueError):
        save_setting("policy", "loose")


def test_save_setting_creates_the_file():
    assert not config_path().exists()
    save_setting("approve", "ask")
    assert load_config().approve == "ask"


def test_config_file_location_follows_env(monkeypatch, tmp_path):
    monkeypatch.setenv("CAVE_CONFIG", str(tmp_path / "elsewhere.toml"))
    (tmp_path / "elsewhere.toml").write_text('theme = "cave-high-contrast"\n')
    assert load_config().theme == "cave-high-contrast"


def test_agent_policies_come_from_the_agent_table_the_env_and_flags(monkeypatch):
    assert load_config().policies == "auto"
    write('[agent]\npolicies = "minimal,rewind"\nmax_steps = 3\n')
    config = load_config()
    assert (config.policies, config.max_steps, config.source("policies")) == (
        "minimal,rewind",
        3,
        "file",
    )
    monkeypatch.setenv("CAVE_POLICIES", "off")
    assert load_config().policies == "off"
    assert load_config({"policies": "strict"}).policies == "strict"


def test_an_unknown_policy_in_the_file_is_reported_with_the_valid_names():
    write('[agent]\npolicies = "guided,-nope"\ncolour = 1\n')
    config = load_config()
    assert config.policies == "auto"
    assert any("nope" in w and "repeat_guard" in w for w in config.warnings)
    assert any("[agent] setting 'colour'" in w for w in config.warnings)


def test_cell_timeout_comes_from_the_file_the_env_and_flags(monkeypatch):
    assert Config().cell_timeout == 300 and Config().cell_time_limit == 300
    write("cell_timeout = 60\n")
    assert load_config().cell_timeout == 60
    monkeypatch.setenv("CAVE_CELL_TIMEOUT", "0")
    config = load_config()
    assert config.cell_timeout == 0 and config.cell_time_limit is None  # 0: no limit
    assert load_config({"cell_timeout": 2.5}).cell_time_limit == 2.5
    monkeypatch.setenv("CAVE_CELL_TIMEOUT", "-1")
    config = load_config()
    assert config.cell_timeout == 60 and "cell_timeout must be 0 (no limit)" in config.warnings[0]


async def test_the_front_ends_runtimes_get_the_cell_timeout():
    from cave_tui.app.services import AppServices, make_runtime

    services = AppServices(Config(kernel=False, cell_timeout=7))
    await services.start()
    try:
        assert services.runtime.cell_timeout == 7
    finally:
        await services.shutdown()
    assert make_runtime(True, "standard", None).cell_timeout is None  # built, never started


def test_workdir_from_the_kernel_table_the_top_level_env_and_flags(tmp_path):
    """`workdir` is an existing folder, made absolute; one that does not exist is a warning
    from the file (the default is kept) and a refusal from a flag (build_services)."""
    (tmp_path / "w").mkdir()
    write(f'[kernel]\nworkdir = "{tmp_path / "w"}"\n')
    assert load_config().workdir == str(tmp_path / "w")
    write('workdir = "w"\n')  # relative to where cave starts (the test's folder)
    config = load_config()
    assert config.workdir == str(tmp_path / "w") and config.source("workdir") == "file"
    write('workdir = "nope"\n')
    config = load_config()
    assert config.workdir is None and "workdir 'nope' does not exist" in config.warnings[0]
    assert load_config(environ={"CAVE_WORKDIR": "w"}).source("workdir") == "env"
    assert save_setting("workdir", str(tmp_path / "w")).read_text().count("[kernel]") == 1


def test_the_model_stream_timeouts_are_settings_that_reach_the_model(monkeypatch):
    assert Config().first_token_timeout == 600 and Config().stream_idle_timeout == 60
    write("stream_idle_timeout = 30\n")
    assert load_config().stream_idle_timeout == 30
    monkeypatch.setenv("CAVE_FIRST_TOKEN_TIMEOUT", "900")
    config = load_config({"stream_idle_timeout": 5})
    assert config.model_timeouts == {"first_token_timeout": 900, "stream_idle_timeout": 5}
    config = load_config({"stream_idle_timeout": -1})
    assert "stream_idle_timeout must be 0 (no limit)" in config.warnings[0]
    from cave_tui.models import model_from_spec

    model = model_from_spec("openai/m", api_base="http://127.0.0.1:9/v1", **config.model_timeouts)
    assert (model.first_token_timeout, model.stream_idle_timeout) == (900, 30)


def test_the_embedded_models_threads_are_a_setting_that_reaches_its_server():
    from cave_tui.app.model_choice import local_model_installed
    from cave_tui.models import model_from_spec
    from cave_tui.models.local import LocalModel

    config = load_config(environ={"CAVE_LOCAL_THREADS": "1"})
    assert config.local_threads == 1 and config.source("local_threads") == "env"
    assert "local_threads must be" in load_config({"local_threads": -2}).warnings[0]
    light = model_from_spec("openai/m", api_base="http://127.0.0.1:9/v1", **config.model_options)
    assert light.stream_idle_timeout == 60  # the other models take the same options
    if local_model_installed():
        local = model_from_spec("local", **config.model_options)
        assert isinstance(local, LocalModel) and local.server.threads == 1
        assert model_from_spec("local", **Config().model_options).server.threads >= 1
