"""CI thresholds: a thresholds file of metric → minimum (or maximum), checked against a report."""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ThresholdError


@dataclass(frozen=True)
class Rule:
    """A bound on every metric whose 'dataset/config/metric' name matches the pattern."""

    pattern: str
    bound: float
    kind: str  # "min" or "max"

    def violated_by(self, value: float) -> bool:
        return value < self.bound if self.kind == "min" else value > self.bound


@dataclass(frozen=True)
class Failure:
    """A metric outside its bound, or a rule that matched no metric."""

    rule: Rule
    metric: str | None = None
    value: float | None = None

    def message(self) -> str:
        if self.metric is None:
            return f"{self.rule.pattern}: no such metric in the report (threshold {self.rule.kind} {self.rule.bound})"
        op = "<" if self.rule.kind == "min" else ">"
        word = "minimum" if self.rule.kind == "min" else "maximum"
        return f"{self.metric} = {self.value:.4g} {op} {word} {self.rule.bound:g}"


def _read(path: Path) -> Any:
    if not path.is_file():
        raise ThresholdError(f"thresholds file not found: {path}")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".toml":
            import tomllib

            return tomllib.loads(text)
        return json.loads(text)
    except ValueError as exc:  # JSONDecodeError and TOMLDecodeError are ValueErrors
        raise ThresholdError(f"{path}: cannot parse thresholds ({exc})") from exc


def load_thresholds(path: str | Path) -> list[Rule]:
    """Rules from JSON/TOML: {"min": {name: bound}, "max": {...}}, or a flat {name: minimum}.

    Names are 'dataset/config/metric' and may use shell wildcards, e.g. "seed_qa/*/recall@5".
    Keys starting with '_' are comments.
    """
    path = Path(path)
    data = _read(path)
    if not isinstance(data, dict):
        raise ThresholdError(f"{path}: expected a table of metric → threshold")
    sections: dict[str, Any]
    if set(data) - {"min", "max"} <= {k for k in data if k.startswith("_")}:
        sections = {k: data.get(k, {}) for k in ("min", "max")}
    else:
        sections = {"min": data}
    rules = []
    for kind, table in sections.items():
        if not isinstance(table, dict):
            raise ThresholdError(f"{path}: '{kind}' must be a table of metric → threshold")
        for name, bound in table.items():
            if name.startswith("_"):
                continue
            if isinstance(bound, bool) or not isinstance(bound, (int, float)):
                raise ThresholdError(f"{path}: threshold of {name!r} must be a number, got {bound!r}")
            rules.append(Rule(name, float(bound), kind))
    if not rules:
        raise ThresholdError(f"{path}: no thresholds")
    return rules


def check(flat: dict[str, float], rules: list[Rule]) -> list[Failure]:
    """Every metric outside its bound; a rule that matches nothing fails too (a typo must not pass)."""
    failures = []
    for rule in rules:
        names = [n for n in flat if fnmatch.fnmatchcase(n, rule.pattern)]
        if not names:
            failures.append(Failure(rule))
        for name in sorted(names):
            if rule.violated_by(flat[name]):
                failures.append(Failure(rule, name, flat[name]))
    return failures
