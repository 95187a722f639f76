"""Retrieval thresholds: dev sets and the author, named-paper and similar-to sets on the full corpus,
scored with the product's default retriever and checked against evals/thresholds/retrieval.json."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from evals.ci_thresholds import check, load_thresholds
from evals.datasets import load_dataset
from evals.metrics import hit_at_k, ndcg_at_k, recall_at_k, reciprocal_rank

pytestmark = pytest.mark.slow

THRESHOLDS = Path(__file__).resolve().parent.parent / "evals" / "thresholds" / "retrieval.json"


def _scores(rag, spec: str | Path) -> dict[str, float]:
    ds = load_dataset(spec)
    rows = []
    for item in ds.items:
        r = rag.retrieve(item.query, top_k=100)
        ids = [s.paper_id for s in r.sources]
        gold = list(item.gold_ids)
        row = {
            "ndcg@10": ndcg_at_k(ids, gold, 10),
            "recall@10": recall_at_k(ids, gold, 10),
            "recall@100": recall_at_k(ids, gold, 100),
            "mrr": reciprocal_rank(ids, gold),
            "hit@1": hit_at_k(ids, gold, 1),
        }
        if ds.name == "authors":  # the list is the author's papers and only theirs
            row["precision@returned"] = len(set(ids) & set(gold)) / max(1, len(ids))
        if ds.name == "similar":
            anchor = r.intent.similar_to if r.intent else None
            row["anchor_excluded"] = float(anchor is not None and anchor not in ids)
        rows.append(row)
    return {m: statistics.fmean(row[m] for row in rows) for m in rows[0]}


def test_default_retriever_passes_the_retrieval_gate(full_rag, evalsets: Path) -> None:
    flat: dict[str, float] = {}
    for spec in (evalsets / "topics_dev.jsonl", evalsets / "descriptions_dev.jsonl", "authors", "named", "similar"):
        name = Path(str(spec)).stem
        for metric, value in _scores(full_rag, spec).items():
            flat[f"{name}/hybrid/{metric}"] = value
    failures = check(flat, load_thresholds(THRESHOLDS))
    assert not failures, "\n".join(f.message() for f in failures)
