"""Prompt templates kept as files in `prompts/`, loaded by name and rendered strictly.

The templates live in the checkout's top-level `prompts/` folder (evaluation prompts in
`prompts/eval/`). A built wheel ships that folder inside the package as `rag/_prompts/` (see
`[tool.setuptools.package-dir]` in pyproject.toml); that copy is used when present, so an installed
package needs no checkout. An editable install has no such copy and reads the checkout's folder."""

from __future__ import annotations

import string
from functools import lru_cache
from importlib import resources
from pathlib import Path

from rag.errors import ConfigError


def _prompts_dir() -> Path:
    packaged = resources.files("rag").joinpath("_prompts")
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "prompts"


PROMPTS_DIR = _prompts_dir()


@lru_cache(maxsize=None)
def load(name: str) -> str:
    """The text of `prompts/<name>.txt` (trailing newline removed); a subfolder is part of the
    name, e.g. `load("eval/citation_support")`."""
    path = PROMPTS_DIR / f"{name}.txt"
    try:
        return path.read_text(encoding="utf-8").rstrip("\n")
    except FileNotFoundError as exc:
        raise ConfigError(f"prompt file missing: {path}") from exc


def variables(name: str) -> set[str]:
    """Names of the `{placeholders}` a template expects."""
    return {field for _, field, _, _ in string.Formatter().parse(load(name)) if field}


def render(name: str, **values: object) -> str:
    """Fill a template; a missing or unexpected variable is an error, not a silent blank."""
    expected = variables(name)
    given = set(values)
    if expected != given:
        missing = ", ".join(sorted(expected - given)) or "none"
        extra = ", ".join(sorted(given - expected)) or "none"
        raise ConfigError(f"prompt {name!r}: missing variables: {missing}; unexpected: {extra}")
    return load(name).format(**values)


REFUSAL = load("refusal")
