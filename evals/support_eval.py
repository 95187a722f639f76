"""How good is the support checker? Precision and recall of "supported" on a hand-labelled set.

`evals/data/support_labels.jsonl` holds (sentence, paper_id, label, reason, origin) pairs labelled by
reading the abstract: sentences from real local-model answers plus hard cases (verbatim and trimmed
sentences; sentences from other abstracts; swapped names, numbers and titles; invented authors;
negations and over-claims). Every report that scores citation support prints these figures.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from rag.ingest.corpus import load_many

from .datasets import BUILTIN_DIR, SHARED_DIR, jsonl_objects
from .errors import EvalError

LABELS = BUILTIN_DIR / "support_labels.jsonl"
CORPUS = SHARED_DIR / "data" / "iclr2025" / "papers.jsonl"


def load_labels(path: Path = LABELS) -> list[dict[str, Any]]:
    """The labelled pairs; a bad line is an error naming the file and line."""
    rows = []
    for i, row in jsonl_objects(path, EvalError):
        if row.get("label") not in ("supported", "unsupported") or not row.get("sentence"):
            raise EvalError(f"{path}:{i}: needs a sentence and label 'supported' or 'unsupported'")
        rows.append(row)
    return rows


def evaluate_checker(labels_path: Path = LABELS, corpus_path: Path = CORPUS) -> dict[str, Any]:
    """Precision/recall of the checker's "supported" against the labels, with the disagreements."""
    from rag.grounding.support import CHECKER_NAME, check_source

    if not labels_path.is_file():
        raise EvalError(f"labelled support set missing: {labels_path}")
    if not corpus_path.is_file():
        raise EvalError(f"corpus missing: {corpus_path} (the labels refer to its papers)")
    papers = {p.id: p for p in load_many([corpus_path]).papers}
    rows = load_labels(labels_path)
    tp = fp = fn = tn = 0
    by_origin: dict[str, Counter[str]] = {}
    errors = []
    for row in rows:
        paper = papers.get(row["paper_id"])
        if paper is None:
            raise EvalError(f"{labels_path}: paper {row['paper_id']!r} is not in {corpus_path}")
        v = check_source(row["sentence"], paper.title, paper.abstract, paper.authors)
        gold = row["label"] == "supported"
        outcome = ("t" if v.supported == gold else "f") + ("p" if v.supported else "n")
        tp += outcome == "tp"
        fp += outcome == "fp"
        fn += outcome == "fn"
        tn += outcome == "tn"
        by_origin.setdefault(row.get("origin", "?"), Counter())[outcome] += 1
        if v.supported != gold:
            errors.append({**row, "checker": v.rule, "missing": v.missing[:5]})
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {
        "checker": CHECKER_NAME,
        "pairs": len(rows),
        "supported_labels": tp + fn,
        "precision": precision,
        "recall": recall,
        "accuracy": (tp + tn) / len(rows) if rows else 0.0,
        "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
        "by_origin": {k: dict(v) for k, v in sorted(by_origin.items())},
        "errors": errors,
    }


@cache
def checker_precision() -> dict[str, Any] | None:
    """The checker's figures on the labelled set (None when the set or the corpus is not here)."""
    if not LABELS.is_file() or not CORPUS.is_file():
        return None
    result = evaluate_checker()
    return {k: result[k] for k in ("checker", "pairs", "precision", "recall")}
