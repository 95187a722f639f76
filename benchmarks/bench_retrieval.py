"""Retrieval benchmark: quality (with 95 % bootstrap CIs) and latency of retrieval configurations on
one store of the full corpus, compared in one run; optionally the ingest time of that store.

    .venv/bin/python benchmarks/bench_retrieval.py [--store DIR] [--ingest] [--out reports/bench_retrieval.json]

Configurations (all on the same store, sentence-window chunks):
  default      hybrid: dense (2 best chunks per paper) + BM25 (title x3), RRF, Rocchio feedback, query understanding
  no-feedback  default without the feedback pass
  no-intent    default without query understanding (authors, named papers, similar-to, list length)
  bm25 / dense each ranking alone (with query understanding)
Question sets: topics_dev and descriptions_dev (../shared/evalsets), and the built-in authors, named
and similar sets (evals/data). Retrieval depth is 100 papers, as in `rag eval --preset dev`.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from evals.datasets import load_dataset  # noqa: E402
from evals.metrics import bootstrap_ci, ndcg_at_k, recall_at_k, reciprocal_rank  # noqa: E402
from rag import RAG, Settings  # noqa: E402
from rag.cli import setup_logging  # noqa: E402
from rag.retrieval.retrieve import PaperRetriever  # noqa: E402

logger = logging.getLogger("bench_retrieval")
SHARED = REPO.parent / "shared"
SETS = {
    "topics_dev": SHARED / "evalsets/topics_dev.jsonl",
    "descriptions_dev": SHARED / "evalsets/descriptions_dev.jsonl",
    "authors": "authors",
    "named": "named",
    "similar": "similar",
}
CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "no-feedback": {"feedback_weight": 0.0},
    "no-intent": {"understand": False},
    "bm25": {"mode": "bm25"},
    "dense": {"mode": "dense"},
}
DEPTH = 100


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


def score(ids: list[str], gold: list[str]) -> dict[str, float]:
    return {
        "ndcg@10": ndcg_at_k(ids, gold, 10),
        "recall@10": recall_at_k(ids, gold, 10),
        "recall@100": recall_at_k(ids, gold, 100),
        "mrr": reciprocal_rank(ids, gold),
        "hit@1": float(bool(ids) and ids[0] in gold),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, default=Path("/tmp/bench-retrieval-store"), help="store directory")
    ap.add_argument("--corpus", type=Path, default=SHARED / "data/iclr2025/papers.jsonl")
    ap.add_argument("--ingest", action="store_true", help="(re)build the store from scratch and time it")
    ap.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated subset of: " + ", ".join(CONFIGS))
    ap.add_argument("--rerank-url", help="OpenAI-compatible endpoint: also score LLM reranking (config rerank-llm)")
    ap.add_argument("--rerank-model", default="smollm2", help="model name at --rerank-url")
    ap.add_argument("--rerank-limit", type=int, default=20, help="questions per set scored with LLM reranking")
    ap.add_argument("--out", type=Path, default=REPO / "reports/bench_retrieval.json")
    args = ap.parse_args(argv)
    setup_logging("WARNING")
    results: dict[str, Any] = {"configs": {}}
    settings = Settings(store={"path": args.store, "auto_seed": False})
    if args.ingest:
        import shutil

        shutil.rmtree(args.store, ignore_errors=True)
        rag = RAG(settings)
        t0 = time.perf_counter()
        report = rag.ingest([args.corpus], progress=True)
        results["ingest_s"] = round(time.perf_counter() - t0, 1)
        results["chunks"] = report.chunks_written
        print(f"ingest: {report.added} papers, {report.chunks_written} chunks in {results['ingest_s']} s")
    rag = RAG(settings)
    if rag.store.count_chunks() == 0:
        ap.error(f"the store {args.store} is empty: run with --ingest")
    datasets = {name: load_dataset(spec) for name, spec in SETS.items()}
    names = [c for c in args.configs.split(",") if c]
    if args.rerank_url:
        from rag.models.llm import build_llm
        from rag.retrieval.rerank import LLMReranker

        llm = build_llm(settings.llm.model_copy(update={"base_url": args.rerank_url, "model": args.rerank_model, "timeout": 300}))
        CONFIGS["rerank-llm"] = {"rerank": "llm"}
        CONFIGS["same-questions"] = {}
        names += ["same-questions", "rerank-llm"]
    for name in names:
        cfg = settings.retrieval.model_copy(update=CONFIGS[name])
        reranker = LLMReranker(llm) if name == "rerank-llm" else None
        retriever = PaperRetriever(rag.store, rag.embed_model, cfg, reranker=reranker)
        retriever.retrieve("warm up the paper table and the BM25 index")
        limit = args.rerank_limit if name in ("rerank-llm", "same-questions") else None
        per_set: dict[str, Any] = {}
        latencies: list[float] = []
        for set_name, ds in datasets.items():
            rows = []
            for item in ds.items[:limit]:
                t = time.perf_counter()
                r = retriever.retrieve(item.query, {"top_k": DEPTH})
                latencies.append((time.perf_counter() - t) * 1000)
                rows.append(score([s.paper_id for s in r.sources], list(item.gold_ids)))
            per_set[set_name] = {}
            for metric in rows[0]:
                values = [row[metric] for row in rows]
                lo, hi = bootstrap_ci(values)
                per_set[set_name][metric] = {"mean": round(statistics.fmean(values), 4), "ci95": [round(lo, 4), round(hi, 4)]}
        results["configs"][name] = {
            "sets": per_set,
            "latency_ms": {"p50": round(pct(latencies, 50), 1), "p95": round(pct(latencies, 95), 1)},
        }
        head = per_set["topics_dev"]
        print(
            f"{name:12s} topics nDCG@10 {head['ndcg@10']['mean']:.3f} {head['ndcg@10']['ci95']} "
            f"R@10 {head['recall@10']['mean']:.3f} | desc MRR {per_set['descriptions_dev']['mrr']['mean']:.3f} "
            f"| authors R@100 {per_set['authors']['recall@100']['mean']:.3f} "
            f"| named hit@1 {per_set['named']['hit@1']['mean']:.3f} "
            f"| similar R@10 {per_set['similar']['recall@10']['mean']:.3f} "
            f"| p50 {results['configs'][name]['latency_ms']['p50']} ms p95 {results['configs'][name]['latency_ms']['p95']} ms",
            flush=True,
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
