"""The app in headless mode: turns, the log, the inspector, direct Python, control keys."""

from __future__ import annotations

from cave_tui.frontends.tui.screens.approve import ApprovalScreen
from cave_tui.frontends.tui.screens.detail import DetailScreen
from cave_tui.frontends.tui.widgets.chat import AgentMessage, EditNote
from cave_tui.frontends.tui.widgets.steplog import FoldedOutput, StepEntry
from cave_tui.models import ScriptedModel

from .conftest import TWO_STEP_FRAME, chat_text, make_app, settle, submit, wait_for


async def test_two_step_turn_fills_chat_log_and_inspector():
    app = make_app(TWO_STEP_FRAME)
    events = []
    app.services.event_hooks.append(events.append)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "Which species is heaviest?")
        text = chat_text(app)
        assert "Which species is heaviest?" in text
        assert "Gentoo** penguins are the heaviest" in text
        assert "✓ ran · changed pd, df" in text
        entries = list(app.steplog.query(StepEntry))
        assert [e.step for e in entries] == [1, 2]
        assert all(e.outcome == "ok" for e in entries)
        outputs = [str(o.full) for o in app.steplog.query(FoldedOutput)]
        assert outputs == ["(3, 2)", "'Gentoo'"]
        names = [row.name for row in app.inspector.table.rows]
        assert names == ["pd", "df", "heaviest"]
        assert app.inspector.table.changed == {"heaviest"}  # the last cell's change
        assert app.status.step == 3 and app.status.tokens_in > 0 and not app.busy
        # The event hook saw every event, in order, ending with the final answer.
        kinds = [e.type.value for e in events]
        assert kinds[0] == "user" and kinds[-1] == "final_response"
        assert kinds.count("code") == 2 and kinds.count("execution_output") == 2


async def test_python_prefix_runs_without_the_model_and_refreshes_inspector():
    app = make_app([])  # a model with no replies: it must not be called
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "!x = 6 * 7\nprint(x)")
        entry = app.steplog.query_one(StepEntry)
        assert entry.agent == "user" and entry.outcome == "ok"
        assert app.steplog.query_one(FoldedOutput).full == "42"
        assert [r.name for r in app.inspector.table.rows] == ["x"]
        assert app.services.model.requests == []
        await submit(pilot, "!1/0")
        failed = list(app.steplog.query(StepEntry))[-1]
        assert failed.outcome == "ZeroDivisionError"
        assert "ZeroDivisionError" in list(app.steplog.query(FoldedOutput))[-1].full


async def test_error_in_code_is_shown_and_the_turn_continues():
    app = make_app(["```python\n1/0\n```", "Division by zero; I will stop here."])
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "divide")
        entry = app.steplog.query_one(StepEntry)
        assert entry.outcome == "ZeroDivisionError" and entry.has_class("-failed")
        assert "✗ ZeroDivisionError" in chat_text(app)
        assert "I will stop here." in chat_text(app)


async def test_model_error_is_reported_and_the_app_keeps_running():
    app = make_app(["```python\na = 1\n```"])  # the script runs out on step 2
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "go")
        assert "ran out of replies" in chat_text(app)
        assert not app.busy
        await submit(pilot, "!b = 2")
        assert {r.name for r in app.inspector.table.rows} == {"a", "b"}


async def test_no_model_opens_and_explains():
    app = make_app(None)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert "No model is configured" in chat_text(app)
        assert "cave demo" in chat_text(app)
        await submit(pilot, "hello")
        assert chat_text(app).count("No model is configured") == 2
        assert app.prompt.text == "hello"  # nothing lost
        await submit(pilot, "!y = 1")  # direct Python still works
        assert [r.name for r in app.inspector.table.rows] == ["y"]


LONG_CELL = (
    "Working on it.\n\n```python\nstarted = True\nimport time\n"
    "while True:\n    time.sleep(0.01)\nfinished = True\n```"
)


async def test_ctrl_c_interrupts_the_cell_keeps_partial_output_and_twice_quits():
    app = make_app([LONG_CELL, "never used"])
    exits = []
    app.services.exit_hooks.append(lambda: exits.append(True))
    async with app.run_test() as pilot:
        await settle(pilot)
        app.prompt.text = "loop"
        await pilot.press("enter")
        runtime = app.services.runtime
        await wait_for(pilot, lambda: "started" in runtime._ns)
        assert app.busy
        await pilot.press("ctrl+c")
        await settle(pilot)
        assert not app.busy
        assert "finished" not in runtime._ns
        assert "Interrupted" in chat_text(app)
        assert "Working on it." in app.chat.query_one(AgentMessage).text  # partial kept
        assert app.steplog.query_one(StepEntry).outcome == "interrupted"
        # The runtime is usable again.
        await submit(pilot, "!after = 1")
        assert "after" in runtime._ns
        # A second Ctrl+C soon after the interrupt quits (through the exit hooks).
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert exits == [True]


async def test_ctrl_c_twice_quits_when_idle():
    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        assert any("again to quit" in str(n.message) for n in app._notifications)
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert not app.is_running


async def test_escape_cancels_the_turn():
    app = make_app([LONG_CELL])
    async with app.run_test() as pilot:
        await settle(pilot)
        app.prompt.text = "loop"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "started" in app.services.runtime._ns)
        await pilot.press("escape")
        await settle(pilot)
        assert not app.busy and "Interrupted" in chat_text(app)
        assert app.is_running


async def test_input_sent_while_busy_is_queued_and_runs_next():
    app = make_app([LONG_CELL, "The **second** answer."])
    async with app.run_test() as pilot:
        await settle(pilot)
        app.prompt.text = "loop"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "started" in app.services.runtime._ns)
        app.prompt.text = "second task"
        await pilot.press("enter")
        await pilot.pause()
        assert app.prompt.text == "" and app.history.entries[-1] == "second task"
        assert "second task" not in chat_text(app)  # not started yet
        await pilot.press("escape")  # the running turn ends: the queued one starts
        await wait_for(pilot, lambda: "second** answer" in chat_text(app))
        await settle(pilot)
        assert chat_text(app).count("second task") == 1


async def test_bindings_that_do_not_apply_are_hidden():
    app = make_app([LONG_CELL])
    async with app.run_test() as pilot:
        await settle(pilot)

        def shown() -> set[str]:
            return {b.binding.action for b in app.screen.active_bindings.values() if b.enabled}

        idle = shown()
        assert "interrupt" not in idle and "cancel_turn" not in idle
        assert {"request_quit", "help", "inspector"} <= idle
        app.prompt.text = "loop"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "started" in app.services.runtime._ns)
        busy = shown()
        assert {"interrupt", "cancel_turn"} <= busy
        await pilot.press("escape")
        await settle(pilot)


async def test_ctrl_q_quits_through_the_exit_hooks():
    app = make_app([])
    order = []

    async def slow_hook() -> None:
        order.append("async hook")

    app.services.exit_hooks += [lambda: order.append("hook"), slow_hook]
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert order == ["hook", "async hook"]
    assert app.return_code == 0


def asking(app, step: int) -> bool:
    return isinstance(app.screen, ApprovalScreen) and app.status.step == step


async def test_approval_run_edit_skip():
    replies = [
        "```python\nfirst = 1\n```",
        "```python\nsecond = 2\n```",
        "```python\nthird = 3\n```",
        "Done.",
    ]
    app = make_app(replies)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "/approve ask")
        assert app.config.approve == "ask" and app.status.approve == "ask"
        app.prompt.text = "three steps"
        await pilot.press("enter")
        # Step 1: Run as written.
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        assert app.screen.step == 1  # the step whose code it is, not the status line's
        await pilot.press("ctrl+r")
        # Step 2: Edit, then run the edit.
        await wait_for(pilot, lambda: asking(app, step=2))
        assert app.screen.step == 2
        await pilot.press("ctrl+e")
        editor = app.screen.query_one("#approve-code")
        editor.text = "second = 22"
        await pilot.press("ctrl+r")
        # Step 3: Skip.
        await wait_for(pilot, lambda: asking(app, step=3))
        await pilot.press("escape")
        await settle(pilot)
        runtime = app.services.runtime
        assert runtime._ns["first"] == 1 and runtime._ns["second"] == 22
        assert "third" not in runtime._ns
        entries = list(app.steplog.query(StepEntry))
        assert [e.outcome for e in entries] == ["ok", "ok", "skipped"]
        assert entries[1].code.strip() == "second = 22"
        # The chat shows what ran in place of the model's code.
        assert [w.code.strip() for w in app.chat.query(EditNote)] == ["second = 22"]
        assert "skipped by you" in chat_text(app)
        assert "Done." in chat_text(app)


async def test_interrupt_while_approval_is_open_closes_it():
    app = make_app(["```python\nz = 1\n```"])
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "/approve ask")
        app.prompt.text = "go"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        app.cancel_turn()
        await settle(pilot)
        assert not isinstance(app.screen, ApprovalScreen)
        assert "z" not in app.services.runtime._ns and not app.busy


async def test_inspector_filter_detail_and_actions(isolated_dirs):
    app = make_app(TWO_STEP_FRAME)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "go")
        table = app.inspector.table
        # Filter.
        app.inspector.filter_input.focus()
        await pilot.press(*"df")
        assert [r.name for r in table.shown] == ["df"]
        assert "1 of 3" in app.inspector.border_title
        await pilot.press("enter")  # to the table
        assert table.has_focus
        # Detail view of the frame: its table, then (v) dtypes and describe().
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        await settle(pilot)
        screen = app.screen
        assert screen.detail is not None and screen.detail.is_frame
        assert screen.frame is not None and screen.frame.table.row_count == 3
        await pilot.press("v")
        assert "mass: int64" in str(screen.query_one("#detail-dtypes").render())
        assert screen.query_one("#detail-describe").row_count == 8
        # Insert the name into the input.
        await pilot.press("i")
        await pilot.pause()
        assert not isinstance(app.screen, DetailScreen)
        assert app.prompt.text == "df" and app.prompt.has_focus
        # Retrieve to a file.
        table.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        await pilot.press("r")
        await settle(pilot)
        saved = isolated_dirs / "retrieved" / "df.parquet"
        assert saved.exists()
        import pandas as pd

        assert pd.read_parquet(saved)["mass"].tolist() == [3700, 5076, 3733]
        # Delete (asks first).
        table.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        await pilot.press("d")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ConfirmScreen")
        await pilot.press("y")
        await settle(pilot)
        assert "df" not in app.services.runtime._ns
        assert "df" not in [r.name for r in table.rows]


async def test_detail_of_a_large_list_is_bounded():
    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "!big = list(range(1_000_000))")
        app.open_detail("big")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        await settle(pilot)
        text = app.screen.detail.text
        assert "999999" not in text and "more" in text and len(text) < 7000
        await pilot.press("escape")


async def test_stream_renders_every_chunk():
    reply = "\n\n".join(f"Paragraph {i}: " + "word " * 40 for i in range(120))
    app = make_app([reply])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await submit(pilot, "write a lot")
        message = app.chat.query_one(AgentMessage)
        assert message.text == reply
        assert message.markdown.segment_count > 3  # finished blocks froze along the way
        assert not message._pending


async def test_model_switch_keeps_conversation(tmp_path):
    script = tmp_path / "more.yaml"
    script.write_text('- "Second model here."\n')
    app = make_app(["First model here."])
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "hi")
        await submit(pilot, f"/model scripted:{script}")
        assert app.status.model == "scripted:more.yaml"
        await submit(pilot, "again")
        assert "Second model here." in chat_text(app)
        history = app.services.agent.history
        assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
        assert isinstance(app.services.model, ScriptedModel)


async def test_replay_request_renders_a_stream_and_feeds_the_hooks():
    from cave_tui.agent import events as ev

    async def recorded():
        yield ev.UserEvent(content="recorded question")
        yield ev.StepEvent(step=1)
        yield ev.TextEvent(content="Recorded ", step=1)
        yield ev.TextEvent(content="answer.", step=1)
        yield ev.FinalResponseEvent(content="Recorded answer.", step=1)

    app = make_app([])
    seen = []
    app.services.event_hooks.append(lambda e: seen.append(e.type.value))
    async with app.run_test() as pilot:
        await settle(pilot)
        app.ctx.ui.replay_events(recorded())
        await settle(pilot)
        assert "recorded question" in chat_text(app) and "Recorded answer." in chat_text(app)
        assert seen == ["user", "step", "text", "text", "final_response"]
        assert not app.busy


async def test_sub_agent_events_are_labelled():
    from cave_tui.agent import events as ev

    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        app.ctx.ui.render(ev.TextEvent(content="Cleaning.", step=2, agent="cleaner"))
        app.ctx.ui.render(ev.CodeEvent(content="x = 1", code="x = 1", step=2, agent="cleaner"))
        await settle(pilot)
        app.chat.flush_all()
        await pilot.pause()
        label = app.chat.query_one(".reply-label")
        assert str(label.render()) == "cleaner · step 2"
        assert "Cleaning." in chat_text(app)
        assert "step 2 · cleaner · running" in str(app.steplog.query_one(StepEntry).header.render())


async def test_busy_set_before_the_app_composed_shows_once_it_has():
    # watch_busy was guarded by App.is_mounted, a method (so always true): busy set before
    # compose() made the status line raised AttributeError instead of waiting for it.
    app = make_app([])
    app.busy = True
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.status.busy
        app.busy = False
        assert not app.status.busy


async def test_policy_interventions_show_in_the_code_log_and_a_refused_cell_never_runs():
    bad = "```python\nnope_frame['x']\n```"
    app = make_app([bad, bad, "I could not find it."])
    app.services.config.policies = "minimal,repeat_guard"  # read when the agent is built
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "Show x.")
        await wait_for(pilot, lambda: not app.busy)
        entries = list(app.steplog.query(StepEntry))
        assert [e.outcome for e in entries] == ["NameError", "not run · repeat_guard"]
        refused = [str(o.full) for o in entries[1].query(FoldedOutput)]
        assert any("not re-run" in text for text in refused)
        assert "I could not find it." in chat_text(app)


async def test_startup_tasks_are_asked_in_order_once_the_runtime_is_up():
    """`cave demo` live: the questions run one after another, as if typed, with the model."""
    app = make_app(
        ["```python\nx = 6 * 7\n```", "x is 42.", "```python\ny = x + 1\n```", "y is 43."]
    )
    app.startup_tasks = ["Compute x as 6 times 7.", "Now y = x + 1."]
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: "y is 43." in chat_text(app), timeout=30)
        await settle(pilot)
        text = chat_text(app)
        assert text.index("Compute x") < text.index("x is 42.") < text.index("Now y")
        assert app.services.runtime._ns["y"] == 43
        assert app.startup_tasks == [] and not app.busy


async def test_a_turn_that_ends_as_the_app_closes_does_not_crash_it():
    """A TurnFinished handled after the app closed its screens (seen under load)."""
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
    app.busy = True
    app.busy = False  # what on_turn_finished does; it refreshes the key bar of no screen
    assert not app.busy


async def test_a_reply_lead_is_told_in_the_chat_once_not_every_turn():
    """The embedded model's replies are begun in code every turn: the chat says so once."""
    app = make_app(["x = 6 * 7\nfinal_answer(x)\n```", "final_answer(x + 1)\n```"])
    app.services.config.policies = "minimal,reply_in_code"  # read when the agent is built
    app.services.model.continues_reply = True  # as the embedded model's server does
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for task, answer in (("Compute x.", "42"), ("And x + 1?", "43")):
            await submit(pilot, task)
            await wait_for(pilot, lambda answer=answer: answer in chat_text(app))
            await wait_for(pilot, lambda: not app.busy)
        assert chat_text(app).count("begins with '```python'") == 1
        assert app.services.runtime._ns["x"] == 42


async def test_a_cell_a_policy_rewrote_runs_and_says_so_in_the_code_log():
    """answer_format's REWRITE: the resent call runs written in the form; its entry finishes
    as a cell that ran (not "not run"), with the policy's note under it."""
    task = "How many flights? Answer format: @n_flights[value]"
    bare = "```python\nn = 3\nfinal_answer(f'@{n}')\n```"
    app = make_app([bare, bare])
    app.services.config.policies = "small"  # read when the agent is built
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, task)
        await wait_for(pilot, lambda: not app.busy)
        entries = list(app.steplog.query(StepEntry))
        assert [e.outcome.startswith("not run") for e in entries] == [False, False]
        notes = [str(o.render()) for o in entries[1].query(".-note")]
        assert any("[answer_format rewrite]" in text for text in notes), notes
        assert "@n_flights[3]" in chat_text(app)
