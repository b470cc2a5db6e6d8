"""Layering: the core and the app layer never import a UI toolkit; no import cycles anywhere."""

import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import REPO_ROOT

ROOT = REPO_ROOT
CORE = ["agent", "runtime", "security", "skills", "models", "session", "dataio"]
HEADLESS = [*CORE, "app"]  # the app layer is headless too
UI_TOOLKITS = ("textual", "typer", "prompt_toolkit")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    return set(out.split())


def test_import_cave_tui_is_light():
    mods = _modules_after("import cave_tui")
    assert not any(m.startswith(("litellm", "textual", "IPython")) for m in mods)


def test_core_packages_do_not_import_textual_or_litellm():
    pkgs = [p for p in CORE if (ROOT / "cave_tui" / p / "__init__.py").exists()]
    code = "\n".join(f"import cave_tui.{p}" for p in pkgs)
    code += "\nfrom cave_tui.runtime import IPythonRuntime\nfrom cave_tui import CaveAgent"
    mods = _modules_after(code)
    assert not any(m.startswith("textual") for m in mods)
    assert not any(m.startswith("litellm") for m in mods)


def test_starting_cave_loads_no_tokenizer():
    """The cl100k table (a third of a second) loads at the first count, not at start-up:
    `cave --help` and every agent built (compaction is on by default) pay for it only when
    they count tokens."""
    mods = _modules_after("import cave_tui.frontends.cli.main, cave_tui.agent.compaction")
    assert "tiktoken" not in mods


def test_core_and_app_sources_never_mention_a_ui_toolkit():
    for pkg in HEADLESS:
        for path in (ROOT / "cave_tui" / pkg).rglob("*.py"):
            text = path.read_text()
            for toolkit in UI_TOOLKITS:
                assert f"import {toolkit}" not in text and f"from {toolkit}" not in text, path


def test_the_app_layer_imports_no_ui_toolkit():
    code = "import cave_tui.app.services, cave_tui.app.startup, cave_tui.app.commands\n"
    code += "cave_tui.app.commands.load_commands()"
    mods = _modules_after(code)
    assert not [m for m in mods if m.split(".")[0] in UI_TOOLKITS]


def _import_cycles() -> list[list[str]]:
    """Strongly connected groups of cave_tui modules (lazy and TYPE_CHECKING imports count)."""
    import grimp

    graph = grimp.build_graph("cave_tui")
    edges = {
        m: [x for x in graph.find_modules_directly_imported_by(m) if x.startswith("cave_tui")]
        for m in graph.modules
        if m.startswith("cave_tui")
    }
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []
    for root in sorted(edges):  # Tarjan, iterative: the graph is a few hundred modules deep
        if root in order:
            continue
        work = [(root, iter(edges[root]))]
        order[root] = low[root] = len(order)
        stack.append(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in order:
                    order[child] = low[child] = len(order)
                    stack.append(child)
                    work.append((child, iter(edges[child])))
                    break
                if child in stack:
                    low[node] = min(low[node], order[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == order[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        cycles.append(sorted(group))
    return cycles


def test_no_import_cycles_in_the_package():
    assert _import_cycles() == []


def test_import_linter_contract_holds():
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint)], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_parsing_a_command_line_loads_no_pydantic():
    """typer 0.29 builds a pydantic TypeAdapter for every parameter at each start (0.15-0.3 s
    of CPU on every `cave` run): the command line is parsed without pydantic."""
    code = (
        "from typer.main import get_command\nfrom cave_tui.frontends.cli.main import app\n"
        "cli = get_command(app)\nctx = cli.make_context('cave', ['run'])\n"
        "run = cli.get_command(ctx, 'run')\n"
        "run.make_context('run', ['task', '--json', '--in-process'], parent=ctx)"
    )
    assert "pydantic" not in _modules_after(code)
