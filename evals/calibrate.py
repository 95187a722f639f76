"""Refusal-threshold calibration: best dense cosine of answerable vs unanswerable questions."""

from __future__ import annotations

from typing import Any

import numpy as np

from .metrics import present
from .runner import RunResult

GRID = [round(0.01 * i, 2) for i in range(0, 81)]
QUANTILES = (5, 10, 25, 50, 75, 95)


def describe(values: list[float]) -> dict[str, Any]:
    """n, min, selected percentiles, max and mean of a list of similarities."""
    arr = np.asarray(values, dtype=float)
    out: dict[str, Any] = {"n": int(arr.size)}
    if arr.size == 0:
        return out
    out["min"] = round(float(arr.min()), 4)
    for q in QUANTILES:
        out[f"p{q}"] = round(float(np.percentile(arr, q)), 4)
    out["max"] = round(float(arr.max()), 4)
    out["mean"] = round(float(arr.mean()), 4)
    return out


def below(values: list[float], t: float) -> float:
    """Share of values strictly below t (the share a threshold t would refuse)."""
    return float(np.mean(np.asarray(values) < t)) if values else 0.0


def best_dense_samples(result: RunResult) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """best_dense of answerable questions by dataset, and of unanswerable ones by category."""
    answerable: dict[str, list[float]] = {}
    unanswerable: dict[str, list[float]] = {}
    seen: set[str] = set()
    # best_dense does not depend on the retriever mode (dense always runs); one stage per dataset.
    stages = sorted((s for s in result.stages if s.kind == "retrieval"), key=lambda s: s.mode != "dense")
    for stage in stages:
        if stage.dataset.name in seen:
            continue
        seen.add(stage.dataset.name)
        for r in stage.rows:
            if r.get("best_dense") is None:
                continue
            if r["answerable"]:
                answerable.setdefault(stage.dataset.name, []).append(float(r["best_dense"]))
            else:
                unanswerable.setdefault(r.get("category") or stage.dataset.name, []).append(
                    float(r["best_dense"])
                )
    return answerable, unanswerable


def calibrate(result: RunResult, current: float, max_false_refusal: float = 0.02) -> dict[str, Any] | None:
    """Distributions, a threshold sweep and a recommendation (None without both kinds of question)."""
    answerable, unanswerable = best_dense_samples(result)
    if not answerable or not unanswerable:
        return None
    pooled_a = [v for vs in answerable.values() for v in vs]
    pooled_u = [v for vs in unanswerable.values() for v in vs]
    sweep: list[dict[str, Any]] = []
    for t in GRID:
        sweep.append(
            {
                "threshold": t,
                "false_refusal": {name: round(below(vs, t), 4) for name, vs in answerable.items()},
                "false_refusal_pooled": round(below(pooled_a, t), 4),
                "refusal_unanswerable": round(below(pooled_u, t), 4),
                "refusal_by_category": {c: round(below(vs, t), 4) for c, vs in unanswerable.items()},
            }
        )
    ok = [s for s in sweep if max(s["false_refusal"].values()) <= max_false_refusal]
    recommended = max(ok, key=lambda s: s["threshold"]) if ok else sweep[0]
    youden = max(
        sweep, key=lambda s: (s["refusal_unanswerable"] - s["false_refusal_pooled"], -s["threshold"])
    )
    at_current = {
        "threshold": current,
        "false_refusal": {name: round(below(vs, current), 4) for name, vs in answerable.items()},
        "refusal_unanswerable": round(below(pooled_u, current), 4),
        "refusal_by_category": {c: round(below(vs, current), 4) for c, vs in unanswerable.items()},
    }
    return {
        "corpus_papers": result.corpus["papers"],
        "answerable": {name: describe(vs) for name, vs in answerable.items()},
        "answerable_pooled": describe(pooled_a),
        "unanswerable": {c: describe(vs) for c, vs in unanswerable.items()},
        "unanswerable_pooled": describe(pooled_u),
        "rule": f"highest threshold whose false-refusal rate is <= {max_false_refusal:.0%} on every answerable set",
        "recommended": recommended,
        "youden": youden,
        "current": at_current,
        "sweep": sweep,
        "samples": {"answerable": answerable, "unanswerable": unanswerable},
    }


def samples_for_plot(cal: dict[str, Any]) -> tuple[list[float], list[float]]:
    """Pooled answerable and unanswerable similarities from a calibration section."""
    a = [v for vs in cal["samples"]["answerable"].values() for v in vs]
    u = [v for vs in cal["samples"]["unanswerable"].values() for v in vs]
    return present(a), present(u)
