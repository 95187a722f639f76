"""Prompt templates kept as files in `prompts/`, loaded by name and rendered strictly."""

from __future__ import annotations

import string
from functools import lru_cache
from pathlib import Path

from .errors import ConfigError

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"


@lru_cache(maxsize=None)
def load(name: str) -> str:
    """The text of `prompts/<name>.txt` (trailing newline removed)."""
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
