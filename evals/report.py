"""Writes the report: report.json for machines, report.md with tables and PNG plots for people."""

from __future__ import annotations

import json
import logging
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from .config import EvalSettings
from .datasets import REPO_DIR
from .runner import RunResult
from .summary import HEADLINE_ANSWER

logger = logging.getLogger(__name__)

PACKAGES = ("llama-index-core", "chromadb", "sentence-transformers", "llama-cpp-python", "bm25s", "torch")


def git_info(repo: Path = REPO_DIR) -> dict[str, Any]:
    """Commit and dirty state of the repository (None where git is unavailable)."""

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    status = git("status", "--porcelain")
    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(status) if status is not None else None}


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def run_metadata(result: RunResult, argv: list[str] | None = None) -> dict[str, Any]:
    """Commit, models, settings, dataset and corpus hashes: what a reader needs to reproduce the run."""
    return {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": " ".join(argv if argv is not None else sys.argv),
        "git": git_info(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": _versions(),
        "run": result.run.model_dump(mode="json"),
        "corpus": result.corpus,
        "datasets": {
            d.name: {
                "path": str(d.path),
                "sha256": d.sha256,
                "questions": len(d.items),
                "unanswerable": d.n_unanswerable,
            }
            for d in result.datasets
        },
        "models": {
            "embedding": result.settings["embedding_model"],
            "llm": result.settings["llm"]["name"] if result.run.answers else None,
            "judge": result.judge,
        },
        "citation_support_method": result.support_method,
        "settings": result.settings,
        "seconds": {k: round(v, 1) for k, v in result.seconds.items()},
        "stages": [
            {
                "kind": s.kind,
                "config": s.config,
                "dataset": s.dataset.name,
                "fingerprint": s.fingerprint,
                "questions": len(s.rows),
                "computed": s.computed,
                "seconds": round(s.seconds, 1),
            }
            for s in result.stages
        ],
    }


# -- formatting ------------------------------------------------------------------------------


def fmt(stat: dict[str, Any] | None, digits: int = 3) -> str:
    """'0.339 [0.290, 0.389]' from {'mean', 'ci'}; '–' when missing."""
    if not stat:
        return "–"
    s = f"{stat['mean']:.{digits}f}"
    if stat.get("ci"):
        lo, hi = stat["ci"]
        s += f" [{lo:.{digits}f}, {hi:.{digits}f}]"
    return s


def _retrieval_columns(present: set[str]) -> list[str]:
    """hit@k, then recall@k by increasing k, then MRR and nDCG@10."""

    def key(m: str) -> tuple[int, int]:
        family, _, k = m.partition("@")
        return ({"hit": 0, "recall": 1, "mrr": 2, "ndcg": 3}.get(family, 4), int(k) if k.isdigit() else 0)

    return sorted(present, key=key)


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _ms(v: float | None) -> str:
    return "–" if v is None else f"{v:,.0f}"


def markdown(report: dict[str, Any], plots: dict[str, str]) -> str:
    """The human-readable page."""
    meta = report["meta"]
    out = ["# Evaluation report", ""]
    git = meta["git"]
    commit = (git["commit"] or "unknown")[:12] + (" (dirty)" if git.get("dirty") else "")
    out += [
        f"- Created {meta['created']} at commit `{commit}`; preset: {meta['run'].get('preset') or 'none'}",
        f"- Command: `{meta['command']}`",
        f"- Corpus: `{meta['corpus']['path']}` ({meta['corpus']['papers']} papers, sha256 "
        f"`{meta['corpus']['sha256'][:12]}`)",
        f"- Models: embedding {meta['models']['embedding']}; answering LLM {meta['models']['llm'] or '–'}; "
        f"judge {meta['models']['judge'] or 'none'}",
        f"- Run time: {meta['seconds'].get('total', 0):.0f} s "
        f"(questions computed now / total: {sum(s['computed'] for s in meta['stages'])} / "
        f"{sum(s['questions'] for s in meta['stages'])}; the rest came from the cache)",
        "- Figures are means over questions with bootstrap 95% confidence intervals in brackets.",
        "",
    ]
    if report["retrieval"]:
        out += ["## Retrieval (paper level)", ""]
        for ds, configs in report["retrieval"].items():
            names = _retrieval_columns({m for c in configs.values() for m in c["metrics"]})
            n = next(iter(configs.values()))["n"]
            out += [f"### {ds} ({n} questions)", ""]
            rows = [
                [cfg]
                + [fmt(c["metrics"].get(m)) for m in names]
                + [_ms(c["latency_ms"]["retrieval_ms"]["p50"])]
                for cfg, c in configs.items()
            ]
            out += [_table(["config"] + names + ["latency p50 ms"], rows), ""]
        if "retrieval" in plots:
            out += [f"![retrieval metrics]({plots['retrieval']})", ""]
    if report["answers"]:
        out += ["## Answers", "", f"Citation support method: **{meta['citation_support_method']}**.", ""]
        if meta["run"].get("answer_limit"):
            out += [
                f"_Answers cover the first {meta['run']['answer_limit']} answerable questions of each "
                "dataset and every unanswerable one (answer_limit)._",
                "",
            ]
        if "checker" in (meta["citation_support_method"] or ""):
            out += [
                "_Citation support: share of (sentence, cited paper) pairs whose abstract states the "
                "sentence by the rule in rag/grounding/support.py, measured above on the hand-labelled set "
                "evals/data/support_labels.jsonl. No judge endpoint configured "
                "(RAG_EVAL__JUDGE_BASE_URL), so faithfulness/relevancy are not measured._",
                "",
            ]
        for ds, configs in report["answers"].items():
            first = next(iter(configs.values()))
            out += [
                f"### {ds} ({first['n']} questions: {first['n_answerable']} answerable, "
                f"{first['n_unanswerable']} unanswerable)",
                "",
            ]
            names = [
                m
                for m in HEADLINE_ANSWER
                + ["gold_in_sources", "raw_marker_validity", "refusal_rate_before_llm", "tokens_per_answer"]
                if any(m in c["metrics"] for c in configs.values())
            ]
            rows = [
                [cfg, f"{c['n_answered']}/{c['n']}"]
                + [fmt(c["metrics"].get(m), 2 if m == "tokens_per_answer" else 3) for m in names]
                for cfg, c in configs.items()
            ]
            out += [_table(["config", "answered"] + names, rows), ""]
            lat_rows = []
            for cfg, c in configs.items():
                lat = c["latency_ms"]
                lat_rows.append(
                    [
                        cfg,
                        _ms(lat["ttft_ms"]["p50"]),
                        _ms(lat["ttft_ms"]["p95"]),
                        _ms(lat["total_ms"]["p50"]),
                        _ms(lat["total_ms"]["p95"]),
                        _ms(lat["total_ms_llm"]["p50"]),
                        _ms(lat["total_ms_llm"]["p95"]),
                        fmt(c["metrics"].get("tokens_per_answer"), 1),
                    ]
                )
            out += [
                _table(
                    [
                        "config",
                        "first token p50 ms",
                        "first token p95 ms",
                        "total p50 ms",
                        "total p95 ms",
                        "total p50 ms (LLM called)",
                        "total p95 ms (LLM called)",
                        "tokens/answer",
                    ],
                    lat_rows,
                ),
                "",
            ]
            for cfg, c in configs.items():
                if c["by_category"]:
                    cat_rows = [
                        [cat, str(v["n"]), str(v["refused"]), str(v["refused_before_llm"])]
                        for cat, v in sorted(c["by_category"].items())
                    ]
                    out += [
                        f"Refusals of unanswerable questions by category ({cfg}):",
                        "",
                        _table(["category", "questions", "refused", "refused before the LLM"], cat_rows),
                        "",
                    ]
        for key, title in (("answers", "answer metrics"), ("latency", "latency")):
            if key in plots:
                out += [f"![{title}]({plots[key]})", ""]
    cal = report.get("calibration")
    if cal:
        out += calibration_markdown(cal, plots)
    out += [
        "## Run metadata",
        "",
        "```json",
        json.dumps({k: v for k, v in meta.items() if k != "stages"}, indent=2),
        "```",
        "",
    ]
    return "\n".join(out)


def calibration_markdown(cal: dict[str, Any], plots: dict[str, str]) -> list[str]:
    """The refusal-threshold section."""
    out = [
        "## Refusal threshold calibration (best dense cosine)",
        "",
        f"Corpus of {cal['corpus_papers']} papers. The core refuses without calling the LLM when the best "
        "dense cosine similarity is below `RAG_RETRIEVAL__REFUSAL_THRESHOLD`.",
        "",
    ]
    cols = ["n", "min", "p5", "p10", "p25", "p50", "p75", "p95", "max"]
    rows = [[f"answerable: {k}"] + [str(v.get(c, "–")) for c in cols] for k, v in cal["answerable"].items()]
    rows += [
        [f"unanswerable: {k}"] + [str(v.get(c, "–")) for c in cols] for k, v in cal["unanswerable"].items()
    ]
    rows += [["unanswerable: all"] + [str(cal["unanswerable_pooled"].get(c, "–")) for c in cols]]
    out += [_table(["questions"] + cols, rows), ""]
    answerable_names = list(cal["answerable"])
    picks = sorted({0.2, 0.25, 0.3, 0.35, 0.4, cal["recommended"]["threshold"], cal["youden"]["threshold"]})
    sweep = {s["threshold"]: s for s in cal["sweep"]}
    srows = []
    for t in picks:
        s = sweep.get(round(t, 2))
        if s is None:
            continue
        srows.append(
            [f"{t:.2f}"]
            + [f"{s['false_refusal'][n]:.1%}" for n in answerable_names]
            + [f"{s['refusal_unanswerable']:.1%}"]
            + [f"{v:.0%}" for _, v in sorted(s["refusal_by_category"].items())]
        )
    cats = sorted(cal["unanswerable"])
    out += [
        _table(
            ["threshold"]
            + [f"false refusals {n}" for n in answerable_names]
            + ["refused unanswerable"]
            + [f"refused {c}" for c in cats],
            srows,
        ),
        "",
    ]
    rec, cur = cal["recommended"], cal["current"]
    out += [
        f"- Current threshold {cur['threshold']:.2f}: false refusals "
        + ", ".join(f"{k} {v:.1%}" for k, v in cur["false_refusal"].items())
        + f"; refuses {cur['refusal_unanswerable']:.1%} of the unanswerable questions before the LLM.",
        f"- Recommended ({cal['rule']}): **{rec['threshold']:.2f}** — false refusals "
        + ", ".join(f"{k} {v:.1%}" for k, v in rec["false_refusal"].items())
        + f"; refuses {rec['refusal_unanswerable']:.1%} of the unanswerable questions.",
        f"- Youden's J optimum (refused unanswerable − false refusals, pooled): {cal['youden']['threshold']:.2f}.",
        f"- Based on {cal['answerable_pooled']['n']} answerable questions ({', '.join(cal['answerable'])}) and "
        f"{cal['unanswerable_pooled']['n']} unanswerable ones over this corpus; take the threshold from a run "
        "with the dev sets over the full corpus (`--preset dev`), not from a small set.",
        "",
    ]
    if "calibration" in plots:
        out += [f"![best dense cosine]({plots['calibration']})", ""]
    return out


def write_report(
    result: RunResult,
    summary: dict[str, Any],
    calibration: dict[str, Any] | None,
    cfg: EvalSettings,
    argv: list[str] | None = None,
) -> dict[str, Path]:
    """report.json, report.md and plots/*.png in the output directory; returns their paths."""
    out = Path(result.run.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"meta": run_metadata(result, argv), **summary, "calibration": calibration}
    report["meta"]["bootstrap"] = {"samples": cfg.bootstrap_samples, "seed": cfg.seed, "confidence": 0.95}
    from .plots import write_plots

    plots = write_plots(report, out / "plots")
    rel = {k: str(p.relative_to(out)) for k, p in plots.items()}
    paths = {"json": out / "report.json", "markdown": out / "report.md"}
    paths["json"].write_text(
        json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    paths["markdown"].write_text(markdown(report, rel), encoding="utf-8")
    logger.info("report written to %s", paths["markdown"])
    return {**paths, **plots}
