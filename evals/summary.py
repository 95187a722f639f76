"""Per-question rows → per-configuration figures with bootstrap confidence intervals."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .config import EvalSettings
from .metrics import bootstrap_ci, mean, percentile, present, retrieval_scores
from .runner import RunResult, Stage

# Shown first in tables and plots, and what CI thresholds usually watch.
HEADLINE_RETRIEVAL = ["hit@1", "hit@10", "recall@5", "recall@10", "recall@100", "mrr", "ndcg@10"]
HEADLINE_ANSWER = [
    "refusal_rate",
    "false_refusal_rate",
    "citation_validity",
    "citation_coverage",
    "citation_support",
    "grounded_rate",
    "gold_cited_rate",
    "faithfulness",
    "relevancy",
]


class Stats:
    """Bootstrap settings shared by every figure of a report."""

    def __init__(self, cfg: EvalSettings):
        self.samples = cfg.bootstrap_samples
        self.seed = cfg.seed

    def of(self, values: Iterable[float | None]) -> dict[str, Any] | None:
        """{'mean', 'ci', 'n'} of per-question values (None when no question has a value)."""
        vals = present(values)
        if not vals:
            return None
        ci = bootstrap_ci(vals, samples=self.samples, seed=self.seed)
        return {
            "mean": round(float(mean(vals) or 0.0), 4),
            "ci": [round(ci[0], 4), round(ci[1], 4)] if ci else None,
            "n": len(vals),
        }


def _dist(values: Iterable[float | None]) -> dict[str, float | None]:
    vals = present(values)
    return {
        "n": len(vals),
        "p50": _round(percentile(vals, 50)),
        "p95": _round(percentile(vals, 95)),
        "max": _round(max(vals) if vals else None),
    }


def _round(v: float | None, nd: int = 1) -> float | None:
    return None if v is None else round(v, nd)


def summarize_retrieval(stage: Stage, ks: list[int], stats: Stats) -> dict[str, Any] | None:
    """Retrieval metrics over the questions that have gold papers (None: no such question)."""
    rows = [r for r in stage.rows if r["gold_ids"]]
    if not rows:
        return None
    per_q = [retrieval_scores(r["retrieved"], r["gold_ids"], ks) for r in rows]
    names = list(per_q[0])
    metrics = {m: stats.of(q[m] for q in per_q) for m in names}
    return {
        "n": len(rows),
        "metrics": {m: v for m, v in metrics.items() if v is not None},
        "latency_ms": {"retrieval_ms": _dist(r["ms"] for r in stage.rows)},
        "per_question": {
            r["qid"]: {m: round(q[m], 4) for m in ("recall@10", "mrr", "ndcg@10") if m in q}
            for r, q in zip(rows, per_q, strict=True)
        },
    }


def summarize_answers(stage: Stage, stats: Stats) -> dict[str, Any]:
    """Refusal, citation and judge metrics, latency percentiles and tokens of one answer stage."""
    rows = stage.rows
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    answered = [r for r in rows if not r["refused"]]
    llm_rows = [r for r in rows if r["llm_called"]]

    def col(source: list[dict[str, Any]], key: str) -> list[Any]:
        return [r.get(key) for r in source]

    candidates: dict[str, Any] = {
        "refusal_rate": stats.of(float(r["refused"]) for r in unanswerable),
        "refusal_rate_before_llm": stats.of(
            float(r["refused"] and not r["llm_called"]) for r in unanswerable
        ),
        "false_refusal_rate": stats.of(float(r["refused"]) for r in answerable),
        "citation_validity": stats.of(col(answered, "citation_validity")),
        "raw_marker_validity": stats.of(col(answered, "raw_marker_validity")),
        "citation_coverage": stats.of(col(answered, "citation_coverage")),
        "citation_support": stats.of(col(answered, "citation_support")),
        "grounded_rate": stats.of(float(r["grounded"]) for r in answered),
        "gold_cited_rate": stats.of(col([r for r in answered if r["answerable"]], "gold_cited")),
        "gold_in_sources": stats.of(col(answerable, "gold_in_sources")),
        "faithfulness": stats.of(col(answered, "faithfulness")),
        "relevancy": stats.of(col(answered, "relevancy")),
        "tokens_per_answer": stats.of(col(llm_rows, "completion_tokens")),
    }
    timings = [r["timings"] for r in rows]
    latency = {
        "ttft_ms": _dist(t.get("first_token_ms") for t in timings),
        "total_ms": _dist(t.get("total_ms") for t in timings),
        "total_ms_llm": _dist(r["timings"].get("total_ms") for r in llm_rows),
        "retrieval_ms": _dist(t.get("retrieval_ms") for t in timings),
    }
    return {
        "n": len(rows),
        "n_answerable": len(answerable),
        "n_unanswerable": len(unanswerable),
        "n_answered": len(answered),
        "n_llm_calls": len(llm_rows),
        "metrics": {m: v for m, v in candidates.items() if v is not None},
        "latency_ms": latency,
        "by_category": _refusals_by_category(unanswerable),
        "latency_samples": {
            "ttft_ms": [round(v, 1) for v in present(t.get("first_token_ms") for t in timings)],
            "total_ms": [round(v, 1) for v in present(t.get("total_ms") for t in timings)],
        },
    }


def _refusals_by_category(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        c = out.setdefault(r.get("category") or "other", {"n": 0, "refused": 0, "refused_before_llm": 0})
        c["n"] += 1
        c["refused"] += int(r["refused"])
        c["refused_before_llm"] += int(r["refused"] and not r["llm_called"])
    return out


def summarize(result: RunResult, cfg: EvalSettings) -> dict[str, Any]:
    """Figures of every stage, keyed dataset → configuration, plus a flat metric map for threshold checks."""
    stats = Stats(cfg)
    retrieval: dict[str, dict[str, Any]] = {}
    answers: dict[str, dict[str, Any]] = {}
    for stage in result.stages:
        name = stage.dataset.name
        if stage.kind == "retrieval":
            summary = summarize_retrieval(stage, result.run.ks, stats)
            if summary is not None:
                retrieval.setdefault(name, {})[stage.config] = summary
        else:
            answers.setdefault(name, {})[stage.config] = summarize_answers(stage, stats)
    return {"retrieval": retrieval, "answers": answers, "flat": flatten(retrieval, answers)}


def flatten(retrieval: dict[str, Any], answers: dict[str, Any]) -> dict[str, float]:
    """'dataset/config/metric' → value, the names a thresholds file refers to."""
    flat: dict[str, float] = {}
    for section in (retrieval, answers):
        for ds, configs in section.items():
            for config, s in configs.items():
                for m, v in s["metrics"].items():
                    flat[f"{ds}/{config}/{m}"] = v["mean"]
                for m, dist in s["latency_ms"].items():
                    for q in ("p50", "p95"):
                        if dist.get(q) is not None:
                            flat[f"{ds}/{config}/{m}_{q}"] = dist[q]
    return flat
