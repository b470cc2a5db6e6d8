from cave_tui.app.commands.registry import CommandError, CommandRegistry
from tests.helpers.front_end import RecordingContext


async def test_dispatch_parse_usage_and_suggestions():
    reg = CommandRegistry()
    seen = []

    @reg.command("show", "Show a variable", "NAME", min_args=1, max_args=1)
    async def show(ctx, args):
        seen.append(args)

    @reg.command("boom", "Fails")
    async def boom(ctx, args):
        raise CommandError("bad thing")

    ctx = RecordingContext()
    assert await reg.dispatch('/show "my var"', ctx)
    assert seen == [["my var"]]
    assert not await reg.dispatch("/show", ctx)
    assert "Usage: /show NAME" in ctx.lines[-1][0]
    assert not await reg.dispatch("/shwo x", ctx)
    assert "Did you mean /show?" in ctx.lines[-1][0]
    assert not await reg.dispatch("/boom", ctx)
    assert ctx.lines[-1] == ("/boom: bad thing", "error")
    assert not await reg.dispatch('/show "unclosed', ctx)
    assert reg.complete("/sh") == [("/show", "Show a variable")]
