"""The built wheel works on its own: prompts ship inside it and its `rag` answers from a clean venv.

The wheel is built from a copy of the checkout (so build/ and *.egg-info never land in the working
tree, and no stale build/lib file can slip into the wheel) and installed with --no-deps into a fresh
venv. The main venv's dependencies are made visible through a .pth file listing its site-packages:
.pth lines are added to sys.path, but .pth files inside that directory are not run, so the editable
install of this project (its __editable__ finder) stays inactive and only the wheel can be imported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
QUESTION = "Which paper learns graph invariance by removing spurious features?"
_NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "vectorstore", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "reports"
)

# Run in the fresh venv from a folder outside the checkout.
_CHECK = r"""
import json, sys
import evals.judge, rag, rag.prompts
d = rag.prompts.PROMPTS_DIR
names = sorted(p.relative_to(d).with_suffix("").as_posix() for p in d.rglob("*.txt"))
print(json.dumps({
    "rag": rag.__file__,
    "evals": evals.judge.__file__,
    "prompts_dir": str(d),
    "prompts": {n: rag.prompts.load(n) for n in names},
    "eval_prompt": evals.judge.load_prompt("citation_support"),
    "eval_prompts_dir": str(evals.judge.PROMPTS_DIR),
    "meta_path": [repr(f) for f in sys.meta_path],
}))
"""


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 300):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"{cmd} exited {proc.returncode}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    )
    return proc


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_") and k != "PYTHONPATH"}
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        RAG_STORE__PATH=str(tmp / "store"),
        XDG_DATA_HOME=str(tmp / "xdg"),
    )
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("packaging")
    src, wheels, venv, outside = tmp / "src", tmp / "wheels", tmp / "venv", tmp / "elsewhere"
    outside.mkdir()
    shutil.copytree(REPO, src, ignore=_NOT_SOURCE)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
          "-w", str(wheels), str(src)], cwd=tmp)
    (wheel,) = wheels.glob("iclr_rag-*.whl")

    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp)
    py = venv / "bin" / "python"
    # Before the .pth exists, so pip sees only the fresh venv (not the editable install's metadata).
    _run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "--no-deps", "--no-index",
          str(wheel)], cwd=outside)
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=outside).stdout.strip())
    main_site = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    (site / "_main_venv_deps.pth").write_text("".join(f"{p}\n" for p in sorted(main_site)))
    return {"tmp": tmp, "wheel": wheel, "venv": venv, "py": py, "site": site, "outside": outside}


def test_the_wheel_ships_every_prompt_and_no_tests(installed: dict[str, Path]) -> None:
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    prompts = {f"rag/_prompts/{p.relative_to(REPO / 'prompts').as_posix()}"
               for p in (REPO / "prompts").rglob("*.txt")}
    assert "rag/_prompts/answer.txt" in prompts and "rag/_prompts/eval/citation_support.txt" in prompts
    assert prompts <= names, f"missing from the wheel: {sorted(prompts - names)}"
    assert "rag/data/seed_papers.jsonl" in names and "evals/data/seed_qa.jsonl" in names
    assert "rag/serve/__init__.py" in names and "evals/judge.py" in names and "ui/app.py" in names
    assert not [n for n in names if n.startswith(("tests/", "prompts/", "evals/prompts/"))]


def test_the_installed_package_imports_from_the_venv_and_loads_every_prompt(
    installed: dict[str, Path],
) -> None:
    proc = _run([str(installed["py"]), "-c", _CHECK], cwd=installed["outside"], env=_env(installed["tmp"]))
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    site = installed["site"]
    assert Path(got["rag"]) == site / "rag" / "__init__.py"
    assert Path(got["evals"]) == site / "evals" / "judge.py"
    assert Path(got["prompts_dir"]) == site / "rag" / "_prompts"
    assert Path(got["eval_prompts_dir"]) == site / "rag" / "_prompts" / "eval"
    assert not [f for f in got["meta_path"] if "editable" in f.lower()]  # the checkout is not importable
    expected = {
        p.relative_to(REPO / "prompts").with_suffix("").as_posix(): p.read_text(encoding="utf-8").rstrip("\n")
        for p in (REPO / "prompts").rglob("*.txt")
    }
    assert got["prompts"] == expected
    assert got["eval_prompt"] == expected["eval/citation_support"] and "{claim}" in got["eval_prompt"]


def test_the_installed_cli_answers_with_a_citation(installed: dict[str, Path]) -> None:
    env = _env(installed["tmp"])
    proc = _run([str(installed["venv"] / "bin" / "rag"), "ask", QUESTION], cwd=installed["outside"],
                env=env, timeout=600)
    assert "Sources:" in proc.stdout and "[1]" in proc.stdout, proc.stdout
    assert "https://openreview.net/" in proc.stdout
    assert any(Path(env["RAG_STORE__PATH"]).iterdir())  # the seed corpus went into the given store
    assert not (installed["outside"] / "vectorstore").exists()
