"""The README's Python example runs as printed (issue 9: the public API still works after the moves)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def readme_python_block() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python library", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README's Python library section has no python block"
    return match.group(1)


@pytest.mark.slow
def test_the_readme_python_example_runs(tmp_path: Path) -> None:
    code = readme_python_block()
    (tmp_path / "my_papers.csv").write_text(
        "title,abstract\nA Test Paper on Model Merging,We merge fine-tuned models by averaging weights. "
        "Merging improves accuracy on held-out tasks.\n",
        encoding="utf-8",
    )
    env = {**os.environ, "RAG_STORE__PATH": str(tmp_path / "chroma")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "Learning Graph Invariance" in out  # the first answer names its paper
    assert "**References**" in out  # to_markdown's reference list
    assert "LeanAgent" in out  # the follow-up was condensed against the conversation
