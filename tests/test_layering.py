"""The layers point one way: core `rag` ← `ui`, `evals` ← `rag.serve` and the CLI (docs/architecture.md).

An AST walk of every module's imports (module level and inside functions), plus a subprocess that
imports the whole core with the server/UI/eval dependencies made unimportable."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OUTER = {"rag.serve", "rag.cli"}  # rag's own edges: they may import ui and evals (the CLI lazily)
SERVE_DEPS = ("fastapi", "starlette", "uvicorn", "gradio", "fastapi_offline", "sse_starlette")
EVAL_DEPS = ("matplotlib",)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of every module a file imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base)
                mod = f"{prefix}.{node.module}" if node.module else prefix
                out.add(mod)
                if not node.module:
                    out.update(f"{prefix}.{alias.name}" for alias in node.names)
            else:
                out.add(node.module or "")
    return out


def _modules(package: str) -> dict[str, Path]:
    return {_module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}


def _is(name: str, prefixes: tuple[str, ...] | set[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _core() -> dict[str, Path]:
    return {m: p for m, p in _modules("rag").items() if not _is(m, OUTER)}


def test_the_import_walk_sees_relative_and_nested_imports(tmp_path: Path) -> None:
    # The checker must be able to fail: a core-like file with each kind of forbidden import.
    pkg = ROOT / "rag"
    probe = pkg / "_layering_probe.py"
    probe.write_text("from .serve import app\n\ndef f():\n    import ui.render\n    from evals import cli\n")
    try:
        found = _imports(probe)
    finally:
        probe.unlink()
    assert {"rag.serve", "ui.render", "evals"} <= found


def test_core_imports_no_server_ui_or_evals() -> None:
    core = _core()
    assert {"rag.pipeline", "rag.engine", "rag.conversation", "rag.events", "rag.errors"} <= set(core)
    bad = {
        m: sorted(i for i in _imports(p) if _is(i, {"rag.serve", "ui", "evals", *SERVE_DEPS, *EVAL_DEPS}))
        for m, p in core.items()
    }
    assert {m: v for m, v in bad.items() if v} == {}


def test_ui_and_evals_depend_on_the_core_only() -> None:
    for package, forbidden in (("ui", {"rag.serve", "rag.cli", "evals"}), ("evals", {"rag.serve", "rag.cli", "ui"})):
        bad = {m: sorted(i for i in _imports(p) if _is(i, forbidden)) for m, p in _modules(package).items()}
        assert {m: v for m, v in bad.items() if v} == {}, package


def test_the_cli_registers_outer_commands_from_its_explicit_list_only() -> None:
    from rag.cli import EXTRA_COMMANDS

    static = _imports(ROOT / "rag" / "cli.py")
    assert not any(_is(i, {"rag.serve", "ui", "evals"}) for i in static)
    assert {(name, module, extra) for name, module, _, extra in EXTRA_COMMANDS} == {
        ("serve", "rag.serve", "serve"),
        ("eval", "evals.cli", "eval"),
    }


_BLOCKED_IMPORT = """
import importlib, importlib.abc, pkgutil, sys
BLOCKED = {blocked!r}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)", name=name)
sys.meta_path.insert(0, Block())
import rag
for m in {modules!r}:
    importlib.import_module(m)
from rag.cli import main
print("exit", main(["serve"]))
"""


@pytest.mark.slow
def test_the_core_and_the_cli_work_without_the_serve_and_eval_extras() -> None:
    modules = sorted(_core())
    code = _BLOCKED_IMPORT.format(blocked=SERVE_DEPS + EVAL_DEPS, modules=modules)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # `rag serve` without the extra is listed and explains itself; it is not silently missing.
    assert "exit 1" in proc.stdout and "needs the 'serve' extra" in proc.stderr
    assert "pip install 'iclr-rag[serve]'" in proc.stdout + proc.stderr


def test_moved_names_still_work_with_a_deprecation_warning() -> None:
    import importlib

    from rag.events import Final, Token
    from rag.gate import GenerationGate

    token = Token(text="abc")
    with pytest.warns(DeprecationWarning, match="use attributes"):
        assert token["type"] == "token" and token["text"] == "abc"
    with pytest.warns(DeprecationWarning), pytest.raises(KeyError):
        token["answer"]
    assert "answer" == Final.model_fields["type"].default  # the SSE event names are unchanged
    sys.modules.pop("rag.chat", None)
    with pytest.warns(DeprecationWarning, match="rag.chat is deprecated"):
        old = importlib.import_module("rag.chat")
    assert old.GenerationGate is GenerationGate and callable(old.chat_stream)
