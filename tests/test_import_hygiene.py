"""The headless core never imports Textual; `import cave_tui` never imports litellm."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ["agent", "runtime", "security", "skills", "models", "session", "commands", "dataio"]


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


def test_core_sources_never_mention_textual():
    for pkg in CORE:
        for path in (ROOT / "cave_tui" / pkg).rglob("*.py"):
            text = path.read_text()
            assert "import textual" not in text and "from textual" not in text, path


def test_import_linter_contract_holds():
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint)], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
