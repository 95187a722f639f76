"""Metric formulas: paper-level retrieval metrics, citation metrics, percentiles and bootstrap CIs."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
from llama_index.core.evaluation.retrieval.metrics import MRR, HitRate, Recall

from rag.text.citations import claims

_HIT = HitRate()
_RECALL = Recall()
_MRR = MRR()


def paper_ranking(ids: Iterable[str]) -> list[str]:
    """Paper ids in rank order with repeats dropped (chunks of one paper count once)."""
    return list(dict.fromkeys(ids))


def _score(metric: HitRate | Recall | MRR, retrieved: list[str], gold: Sequence[str]) -> float:
    # llama-index refuses empty lists; nothing retrieved (or nothing to find) scores 0.
    if not retrieved or not gold:
        return 0.0
    return float(metric.compute(expected_ids=list(gold), retrieved_ids=retrieved).score)


def hit_at_k(retrieved: Sequence[str], gold: Sequence[str], k: int) -> float:
    """1.0 when a gold paper is among the first k papers, else 0.0."""
    return _score(_HIT, paper_ranking(retrieved)[:k], gold)


def recall_at_k(retrieved: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Share of the gold papers found among the first k papers."""
    return _score(_RECALL, paper_ranking(retrieved)[:k], gold)


def reciprocal_rank(retrieved: Sequence[str], gold: Sequence[str], k: int | None = None) -> float:
    """1/rank of the first gold paper within the first k (0 when none is there)."""
    ranking = paper_ranking(retrieved)
    return _score(_MRR, ranking[:k] if k else ranking, gold)


def ndcg_at_k(retrieved: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Binary-relevance nDCG@k; the ideal ranking holds min(|gold|, k) gold papers.

    llama-index's NDCG divides by the ideal DCG of *all* gold papers, which understates nDCG@k for
    queries with more than k gold papers (common in topics_dev), so the standard form is used here.
    """
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    ranking = paper_ranking(retrieved)[:k]
    dcg = sum(1.0 / math.log2(i + 2) for i, pid in enumerate(ranking) if pid in gold_set)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold_set), k)))
    return dcg / ideal


def retrieval_scores(retrieved: Sequence[str], gold: Sequence[str], ks: Sequence[int]) -> dict[str, float]:
    """Every retrieval metric of one question, keyed like 'recall@10'."""
    out: dict[str, float] = {}
    for k in ks:
        out[f"hit@{k}"] = hit_at_k(retrieved, gold, k)
        out[f"recall@{k}"] = recall_at_k(retrieved, gold, k)
    out["mrr"] = reciprocal_rank(retrieved, gold)
    out["ndcg@10"] = ndcg_at_k(retrieved, gold, 10)
    return out


# -- citations -------------------------------------------------------------------------------


def answer_sentences(text: str) -> list[tuple[str, list[int]]]:
    """(sentence without markers, source numbers it cites) for each claim-sized sentence; a list item's
    [n] after the title cites each of its sentences."""
    return claims(text)


def citation_coverage(text: str) -> float | None:
    """Share of the answer's sentences that carry at least one [n] marker (None: no sentences)."""
    sentences = answer_sentences(text)
    if not sentences:
        return None
    return sum(bool(nums) for _, nums in sentences) / len(sentences)


def marker_validity(text: str, source_numbers: Iterable[int]) -> float | None:
    """Share of the [n] markers in a text that name a retrieved source (None: no markers)."""
    valid = set(source_numbers)
    named = [n for _, nums in answer_sentences(text) for n in nums]
    if not named:
        return None
    return sum(n in valid for n in named) / len(named)


def cited_paper_validity(cited_ids: Sequence[str], retrieved_ids: Iterable[str]) -> float | None:
    """Share of the cited papers that were among the retrieved sources (None: nothing cited)."""
    if not cited_ids:
        return None
    retrieved = set(retrieved_ids)
    return sum(pid in retrieved for pid in cited_ids) / len(cited_ids)


# -- aggregation -----------------------------------------------------------------------------


def present(values: Iterable[float | None]) -> list[float]:
    """The values that are not None or NaN."""
    return [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the present values (None when there are none)."""
    vals = present(values)
    return float(np.mean(vals)) if vals else None


def percentile(values: Iterable[float | None], q: float) -> float | None:
    """The q-th percentile (linear interpolation) of the present values."""
    vals = present(values)
    return float(np.percentile(vals, q)) if vals else None


def bootstrap_ci(
    values: Iterable[float | None], samples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile-bootstrap confidence interval of the mean, resampling questions (deterministic)."""
    vals = np.asarray(present(values), dtype=float)
    if vals.size == 0:
        return None
    if vals.size == 1 or np.all(vals == vals[0]):
        return float(vals[0]), float(vals[0])
    rng = np.random.default_rng(seed)
    means = vals[rng.integers(0, vals.size, size=(samples, vals.size))].mean(axis=1)
    tail = (1.0 - confidence) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo), float(hi)
