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
                if node.module == "rag":  # `from rag import prompts` imports the module rag.prompts
                    out.update(f"rag.{alias.name}" for alias in node.names)
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
    assert {"rag.pipeline", "rag.answer.engine", "rag.chat.conversation", "rag.events", "rag.errors"} <= set(core)
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


# The stages of the core in the order data flows through them (docs/architecture.md): a module may
# import from its own stage and earlier ones, never from a later one.
STAGES: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("rag.errors", "rag.limits", "rag.settings", "rag.prompts", "rag.queue")),
    ("text", ("rag.text",)),
    ("papers and answers", ("rag.types", "rag.export", "rag.permalink", "rag.events", "rag.fieldmap")),
    ("store", ("rag.store",)),
    ("models", ("rag.models",)),
    ("ingest", ("rag.ingest",)),
    ("retrieval", ("rag.retrieval",)),
    ("grounding", ("rag.grounding",)),
    ("answer", ("rag.answer",)),
    ("chat", ("rag.chat",)),
    ("front door", ("rag.pipeline", "rag")),
    ("edges", ("rag.cli", "rag.client", "rag.serve")),
]


def _stage(module: str) -> int | None:
    best: tuple[int, int] | None = None  # (prefix length, stage): the most specific prefix wins
    for i, (_, prefixes) in enumerate(STAGES):
        for p in prefixes:
            if _is(module, (p,)) and (best is None or len(p) > best[0]):
                best = (len(p), i)
    return None if best is None else best[1]


def _rag_imports(path: Path) -> set[str]:
    modules = set(_modules("rag"))
    out = set()
    for name in _imports(path):
        # `from rag.text.terms import words` names a module; `from rag.x import f` may name a function
        while name and name not in modules and "." in name:
            name = name.rpartition(".")[0]
        if name in modules and name != "rag":
            out.add(name)
    return out


def test_every_core_module_belongs_to_a_stage() -> None:
    assert {m for m in _modules("rag") if _stage(m) is None} == set()
    assert len(list((ROOT / "rag").glob("*.py"))) <= 16  # stages live in subpackages, not the root


def test_no_stage_imports_a_later_one() -> None:
    bad = {}
    for module, path in _modules("rag").items():
        here = _stage(module)
        later = sorted(i for i in _rag_imports(path) if (_stage(i) or 0) > (here or 0))
        if later:
            bad[module] = later
    assert bad == {}


def test_no_import_cycle() -> None:
    graph = {m: _rag_imports(p) - {m} for m, p in _modules("rag").items()}
    state: dict[str, int] = {}  # 1 on the path, 2 done
    cycles: list[list[str]] = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                cycles.append(path[path.index(n):] + [n] if n in path else [m, n])
            elif n not in state:
                visit(n, path + [n])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_the_stage_and_cycle_checks_can_fail(tmp_path: Path) -> None:
    probe = ROOT / "rag" / "text" / "_layering_probe.py"
    probe.write_text("def f():\n    from rag.pipeline import RAG\n")
    try:
        assert "rag.pipeline" in _rag_imports(probe)
        assert _stage("rag.text._layering_probe") < _stage("rag.pipeline")  # type: ignore[operator]
    finally:
        probe.unlink()
