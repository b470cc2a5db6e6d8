"""Every slash command and input key path in the app (headless, ScriptedModel, real runtime)."""

from __future__ import annotations

import tomllib
from types import SimpleNamespace

from cave_tui.app.config import Config, config_path
from cave_tui.frontends.tui.screens.confirm import ConfirmScreen
from cave_tui.frontends.tui.screens.detail import DetailScreen
from cave_tui.frontends.tui.screens.help import HelpScreen
from cave_tui.frontends.tui.widgets.chat import Notice
from tests.helpers.json_server import JsonRoutesServer

from .conftest import chat_text, make_app, settle, submit, wait_for


def last_notice(app) -> str:
    return list(app.chat.query(Notice))[-1].text


async def test_help_lists_every_command_and_explains_one():
    from cave_tui.app.commands import registry

    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "/help")
        text = last_notice(app)
        for name in registry.names():
            assert f"/{name}" in text
        await submit(pilot, "/help vars")
        assert "List the variables" in last_notice(app)
        await submit(pilot, "/help nope")
        assert "no command /nope" in last_notice(app)


async def test_unknown_command_and_bad_arguments_suggest():
    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "/vras")
        assert "Unknown command /vras. Did you mean /vars?" in last_notice(app)
        await submit(pilot, "/show")
        assert "Usage: /show NAME" in last_notice(app)
        await submit(pilot, '/show "unclosed')
        assert "could not parse" in last_notice(app)
        assert app.is_running


async def test_vars_show_del():
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "!import pandas as pd\nframe = pd.DataFrame({'a': [1, 2]})\nn = 3")
        await submit(pilot, "/vars")
        table = last_notice(app)
        assert "| frame | DataFrame | 2x1 |" in table and "| n | int |" in table
        await submit(pilot, "/vars fra")
        assert "frame" in last_notice(app) and "| n |" not in last_notice(app)
        await submit(pilot, "/show nn")
        assert "no variable named 'nn'" in last_notice(app) and "did you mean n" in last_notice(app)
        await submit(pilot, "/show frame")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        await settle(pilot)
        assert app.screen.detail.is_frame
        await pilot.press("escape")
        await submit(pilot, "/del n")
        assert "Deleted `n`." in last_notice(app)
        assert "n" not in [r.name for r in app.inspector.table.rows]
        await submit(pilot, "/del n")
        assert "no variable named 'n'" in last_notice(app)


async def test_reset_asks_first():
    app = make_app(["Noted."])
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "!keep = 1")
        await submit(pilot, "remember this")
        app.prompt.text = "/reset"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await settle(pilot)
        assert "keep" in app.services.runtime._ns and "Reset cancelled." in chat_text(app)
        app.prompt.text = "/reset"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot)
        assert "keep" not in app.services.runtime._ns
        assert app.services.agent.history == []
        assert app.inspector.table.rows == []
        assert "Namespace and conversation reset." in chat_text(app)


async def test_model_lists_the_local_servers_found(monkeypatch):
    tags = {"models": [{"name": "llama3.2:3b"}]}
    with JsonRoutesServer({"/api/tags": tags}) as ollama:
        monkeypatch.setenv("OLLAMA_HOST", ollama.url)
        app = make_app(None)
        async with app.run_test() as pilot:
            await settle(pilot)
            await submit(pilot, "/model")
            notice = last_notice(app)
    assert "Model: `no model`" in notice
    assert f"--model ollama_chat/llama3.2:3b --api-base {ollama.url}" in notice


async def test_model_and_bad_model(tmp_path):
    app = make_app(None)
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "/model")
        assert "Model: `no model`" in last_notice(app)
        await submit(pilot, "/model scripted:/does/not/exist.yaml")
        assert "script file not found" in last_notice(app)
        script = tmp_path / "r.yaml"
        script.write_text('- "Hi from the script."\n')
        await submit(pilot, f"/model scripted:{script}")
        assert app.status.model == "scripted:r.yaml"
        await submit(pilot, "hello")
        assert "Hi from the script." in chat_text(app)


async def test_policy():
    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "/policy")
        assert "Policy: `standard`" in last_notice(app)
        await submit(pilot, "/policy strcit")
        assert "Did you mean strict?" in last_notice(app)
        await submit(pilot, "/policy trusted")
        assert app.config.policy == "trusted" and app.status.policy == "trusted"
        assert app.services.runtime.security_checker is None


async def test_approve_modes():
    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "/approve")
        assert "Approval: `auto`" in last_notice(app)
        await submit(pilot, "/approve maybe")
        assert "use ask or auto" in last_notice(app)
        await submit(pilot, "/approve ask")
        assert app.config.approve == "ask"
        await submit(pilot, "/approve auto")
        assert app.config.approve == "auto" and app.status.approve == "auto"


async def test_theme_switches_live_and_persists():
    app = make_app([], persist=True)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.theme == "cave-dark"
        await submit(pilot, "/theme")
        assert "**cave-dark**" in last_notice(app) and "cave-high-contrast" in last_notice(app)
        await submit(pilot, "/theme cave-lihgt")
        assert "Did you mean cave-light?" in last_notice(app)
        await submit(pilot, "/theme cave-light")
        await settle(pilot)
        assert app.theme == "cave-light" and not app.current_theme.dark
        assert app.chat.dark is False
    assert tomllib.loads(config_path().read_text())["theme"] == "cave-light"
    # The next start uses it.
    from cave_tui.app.config import load_config

    again = make_app([], config=load_config())
    async with again.run_test() as pilot:
        assert again.theme == "cave-light"


async def test_bundled_themes_load():
    app = make_app([])
    async with app.run_test():
        assert {"cave-dark", "cave-light", "cave-high-contrast"} <= set(app.available_themes)
        assert app.get_theme("cave-high-contrast").background == "#000000"


async def test_skills_and_skill():
    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "/skills")  # the bundled skills are always discovered
        assert "**data-analysis**" in last_notice(app) and "**charts**" in last_notice(app)
        app.services.agent.skills = []
        await submit(pilot, "/skills")
        assert "No skills loaded" in last_notice(app)
        app.services.agent.skills = [
            SimpleNamespace(name="charts", description="Terminal charts of a frame", path="/s/c"),
            SimpleNamespace(name="data-analysis", description="pandas EDA helpers", path="/s/d"),
        ]
        await submit(pilot, "/skills")
        assert "**charts**: Terminal charts of a frame" in last_notice(app)
        await submit(pilot, "/skill chart")
        assert "Did you mean charts?" in last_notice(app)
        await submit(pilot, "/skill data-analysis")
        assert "pandas EDA helpers" in last_notice(app) and "/s/d" in last_notice(app)


async def test_skills_without_model_say_how_to_set_one():
    app = make_app(None)
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "/skills")
        assert "no model is configured" in last_notice(app)


async def test_compact_on_by_default_off_and_configured():
    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        compactor = app.services.agent._compactor
        window = compactor.effective_window
        await submit(pilot, "/compact")  # on by default (context_window=128000), nothing yet
        assert "Nothing to compact yet." in last_notice(app)
        assert compactor.effective_window == window  # asked for: no prompt was rejected
        app.services.agent._compactor = None  # an agent built with context_window=None
        await submit(pilot, "/compact")
        assert "Compaction is not configured" in last_notice(app)

        from cave_tui.agent import events as ev

        calls = []

        class FakeCompactor:
            async def compact_now(self, step, reactive=False, *, requested=False):
                calls.append(step)
                yield ev.CompactingEvent(tokens_before=900)
                yield ev.CompactedEvent(tokens_before=900, tokens_after=300, tier=2)

        app.services.agent._compactor = FakeCompactor()
        await submit(pilot, "/compact")
        assert calls and chat_text(app).count("900 → 300 tokens") == 1  # told once
        assert "Compacted: 900 → 300 tokens." in chat_text(app)


async def test_cost_counts_tokens():
    app = make_app(["All done."])
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "hi")
        await submit(pilot, "/cost")
        usage = app.services.agent.usage
        text = last_notice(app)
        assert f"{usage.prompt_tokens:,} tokens in" in text
        assert "no price known for this model" in text


async def test_clear_and_config():
    app = make_app(["Hello."])
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "hi")
        await submit(pilot, "!q = 1")
        await submit(pilot, "/clear")
        assert len(app.chat.children) == 0 and len(app.steplog.children) == 0
        assert len(app.services.agent.history) == 2  # the conversation is kept
        await submit(pilot, "/config")
        assert "| guard | standard | default |" in last_notice(app)


async def test_quit_command_runs_exit_hooks():
    app = make_app([])
    ran = []
    app.services.exit_hooks.append(lambda: ran.append("dump"))
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "/quit")
        await pilot.pause()
    assert ran == ["dump"]


async def test_history_across_runs_and_keys(tmp_path):
    history = tmp_path / "history"
    app = make_app([], history=history)
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "!a = 1")
        await submit(pilot, "!b = 2\nc = 3")
    again = make_app([], history=history)
    async with again.run_test() as pilot:
        await settle(pilot)
        prompt = again.prompt
        await pilot.press("up")
        assert prompt.text == "!b = 2\nc = 3"
        await pilot.press("up")
        assert prompt.text == "!a = 1"
        await pilot.press("down")
        await pilot.press("down")
        await pilot.press("down")
        assert prompt.text == ""


async def test_multiline_editing_and_enter_sends():
    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press(*"!x = 1")
        await pilot.press("ctrl+j")
        await pilot.press(*"y = 2")
        assert app.prompt.text == "!x = 1\ny = 2"
        await pilot.press("enter")
        await settle(pilot)
        assert app.prompt.text == ""
        assert {"x", "y"} <= set(app.services.runtime._ns)


async def test_slash_completion_shows_help_and_completes():
    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("slash", "s")
        completions = app.query_one("#completions")
        assert completions.display
        items = [
            str(completions.get_option_at_index(i).prompt) for i in range(completions.option_count)
        ]
        assert any(i.startswith("/show") and "detail view" in i for i in items)
        assert any(i.startswith("/skills") for i in items)
        await pilot.press("tab")
        assert app.prompt.text == items[0].split()[0] + " "  # the first /s… command
        assert not completions.display
        app.prompt.text = "/va"
        await pilot.pause()
        await pilot.press("down", "up")  # an entry picked with the arrows: Enter takes it
        await pilot.press("enter")
        assert app.prompt.text == "/vars "
        await pilot.press("enter")  # then sends it
        await settle(pilot)
        assert "No variables yet." in last_notice(app)
        app.prompt.text = "/va"
        await pilot.pause()
        await pilot.press("enter")  # Enter alone sends what was typed, never a completion
        await settle(pilot)
        assert app.prompt.text == "" and "Did you mean /vars?" in last_notice(app)
        await pilot.press("tab")  # nothing to complete: Tab keeps the focus in the input
        assert app.focused is app.prompt
        app.prompt.text = "/he"
        await pilot.pause()
        await pilot.press("escape")
        assert not completions.display and app.prompt.text == "/he"


async def test_f1_help_and_palette_lists_every_command():
    from cave_tui.app.commands import registry

    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_text = app.screen.query_one("Markdown").source
        assert all(f"/{name}" in help_text for name in registry.names())
        await pilot.press("escape")
        await pilot.pause()
        # The palette's discovery lists every slash command.
        from cave_tui.frontends.tui.palette import SlashCommands

        provider = SlashCommands(app.screen)
        hits = [hit.display async for hit in provider.discover()]
        assert len(hits) == len(registry.names())
        searched = [hit async for hit in provider.search("vars")]
        best = max(searched, key=lambda hit: hit.score)
        assert "/vars" in str(best.match_display)
        # Choosing a command that needs an argument puts it in the input.
        provider._choose("show")
        assert app.prompt.text == "/show "
        provider._choose("clear")
        await settle(pilot)


async def test_palette_opens_with_ctrl_p():
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "CommandPalette")
        await pilot.press(*"theme")
        await pilot.press("escape")


async def test_wide_layout_shows_inspector_and_f2_focuses_it():
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.screen.has_class("-wide")
        assert app.inspector.display and app.inspector.region.width > 0
        assert app.inspector.region.x > app.chat.region.x  # side by side
        await pilot.press("f2")
        assert app.inspector.table.has_focus
        await pilot.press("f2")
        assert app.prompt.has_focus


async def test_narrow_layout_stacks_and_f2_toggles_inspector():
    app = make_app([])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await submit(pilot, "!v = 1")
        assert app.screen.has_class("-narrow")
        assert app.inspector.region.width == 0  # hidden
        assert app.steplog.region.y > app.chat.region.y  # stacked
        await pilot.press("f2")
        await pilot.pause()
        assert app.inspector.region.width == 80 - 0 and app.chat.region.width == 0
        assert app.inspector.table.has_focus
        assert [r.name for r in app.inspector.table.shown] == ["v"]
        await pilot.press("f2")
        await pilot.pause()
        assert app.inspector.region.width == 0 and app.prompt.has_focus


async def test_breakpoint_at_110_columns():
    app = make_app([])
    async with app.run_test(size=(109, 30)) as pilot:
        assert app.screen.has_class("-narrow")
        await pilot.resize_terminal(110, 30)
        await pilot.pause()
        assert app.screen.has_class("-wide")


async def test_keymap_from_config_remaps_bindings():
    config = Config(kernel=False, keymap={"cave.help": "f9"})
    app = make_app([], config=config)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("f9")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))


async def test_config_warnings_are_shown(isolated_dirs):
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text('policy = "loose"\nopenai_api_key = "sk-123"\n')
    from cave_tui.app.config import load_config

    app = make_app([], config=load_config())
    async with app.run_test() as pilot:
        await settle(pilot)
        text = chat_text(app)
        assert "policy must be one of" in text
        assert "API keys are read only from the environment" in text
        assert "sk-123" not in text


async def test_a_cell_sent_while_a_command_runs_runs_after_it():
    """Issue 31.10 (the flaky "sum is 3"): a `!` cell pasted right after answering /reset ran
    while the reset went on; the reset then cleared the chat, and its output was gone."""
    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        app.prompt.text = "/reset"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        # Sent before the command has finished (here: while it still asks).
        app.prompt.text = "!a = 1\nb = a + 1\nprint('sum is', a + b)"
        app.prompt.action_submit()
        await pilot.pause(1.0)  # the dialog waits for its answer (no settling), past its grace
        assert "a" not in app.services.runtime._ns  # it waits for the command
        await pilot.press("y")
        await wait_for(pilot, lambda: app.services.runtime._ns.get("b") == 2)
        await settle(pilot)
        # The reset came first (its chat cleared before), then the cell: its names stay.
        assert "Namespace and conversation reset." in chat_text(app)
        assert app.services.runtime._ns["a"] == 1
