"""Core benchmark: ingest speed, re-ingest, retrieval latency and quality per retriever, local-model
answer latency, peak RSS. Prints a table and writes JSON.

    .venv/bin/python benchmarks/bench_core.py [--answers 5] [--threads 1,2] [--out reports/bench_core.json]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from evals.datasets import load_dataset  # noqa: E402
from evals.metrics import ndcg_at_k, recall_at_k  # noqa: E402
from rag import RAG, Settings  # noqa: E402
from rag.cli import setup_logging  # noqa: E402

SHARED = REPO.parent / "shared"
MODES = ("dense", "bm25", "hybrid")
ANSWER_QUESTIONS = [
    "Which ICLR 2025 papers tackle spurious correlations in vision-language models, and how?",
    "How can synthetic data help post-training of large language models?",
    "What methods make long-context language models more efficient?",
    "Which papers study model merging?",
    "How do diffusion models handle discrete data?",
    "What are new approaches to graph neural network expressivity?",
    "Which papers propose benchmarks for code generation agents?",
    "How is in-context learning explained theoretically?",
]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=SHARED / "data/iclr2025/papers.jsonl")
    ap.add_argument("--evalsets", type=Path, default=SHARED / "evalsets")
    ap.add_argument("--answers", type=int, default=5, help="local-model answers per thread setting (0: skip)")
    ap.add_argument("--threads", default="1,2", help="local-model thread counts to compare")
    ap.add_argument("--out", type=Path, default=REPO / "reports/bench_core.json")
    args = ap.parse_args(argv)
    setup_logging("WARNING")
    results: dict = {"machine": {"cpus": __import__("os").cpu_count()}}

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(store={"path": Path(tmp) / "chroma", "auto_seed": False})
        rag = RAG(settings)
        rag.embed_model  # noqa: B018 - model load is not ingest time
        rss0 = peak_rss_mb()
        report = rag.ingest([args.corpus], progress=True)
        results["ingest"] = {
            "papers": report.added, "chunks": report.chunks_written, "seconds": round(report.seconds, 1),
            "papers_per_s": round(report.papers_per_second, 1), "peak_rss_mb_before": round(rss0),
            "peak_rss_mb_after": round(peak_rss_mb()),
        }
        t = time.perf_counter()
        again = rag.ingest([args.corpus], progress=False)
        results["reingest"] = {"added": again.added + again.updated, "unchanged": again.unchanged,
                               "seconds": round(time.perf_counter() - t, 2)}
        results["stats"] = rag.stats()

        sets = {name: load_dataset(args.evalsets / f"{name}.jsonl") for name in ("topics_dev", "descriptions_dev")}
        results["retrieval"] = {}
        for mode in MODES:
            rag.retrieve("warm up", top_k=10, retriever=mode)
            lat: list[float] = []
            quality = {}
            for name, ds in sets.items():
                ndcg, rec = [], []
                for item in ds.items:
                    t = time.perf_counter()
                    r = rag.retrieve(item.query, top_k=10, retriever=mode)
                    lat.append((time.perf_counter() - t) * 1000)
                    ids = [s.paper_id for s in r.sources]
                    ndcg.append(ndcg_at_k(ids, item.gold_ids, 10))
                    rec.append(recall_at_k(ids, item.gold_ids, 10))
                quality[name] = {"ndcg@10": round(statistics.mean(ndcg), 3), "recall@10": round(statistics.mean(rec), 3)}
            results["retrieval"][mode] = {"p50_ms": round(pct(lat, 50), 1), "p95_ms": round(pct(lat, 95), 1),
                                          "queries": len(lat), **quality}

        results["answers"] = {}
        if args.answers:
            for threads in [int(x) for x in args.threads.split(",")]:
                s = Settings(store={"path": Path(tmp) / "chroma", "auto_seed": False}, llm={"n_threads": threads})
                arag = RAG(s)
                arag.llm._llama()  # load outside the timings
                ttft, total, toks = [], [], []
                for q in ANSWER_QUESTIONS[: args.answers]:
                    a = arag.ask(q)
                    if a.llm_called and a.timings.first_token_ms is not None:
                        ttft.append(a.timings.first_token_ms)
                        total.append(a.timings.total_ms)
                        toks.append(a.completion_tokens or 0)
                results["answers"][f"threads={threads}"] = {
                    "answers": len(ttft), "ttft_p50_ms": round(pct(ttft, 50)), "ttft_max_ms": round(max(ttft)),
                    "total_p50_ms": round(pct(total, 50)), "tokens_p50": pct(toks, 50),
                } if ttft else {"answers": 0}
        results["peak_rss_mb"] = round(peak_rss_mb())

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    ing = results["ingest"]
    print(f"\nfirst ingest: {ing['papers']} papers, {ing['chunks']} chunks in {ing['seconds']} s "
          f"({ing['papers_per_s']} papers/s); re-ingest: {results['reingest']['seconds']} s, "
          f"{results['reingest']['added']} written")
    print(f"{'retriever':10} {'p50 ms':>8} {'p95 ms':>8} {'topics nDCG@10':>15} {'topics R@10':>12} "
          f"{'desc nDCG@10':>13} {'desc R@10':>10}")
    for mode, r in results["retrieval"].items():
        print(f"{mode:10} {r['p50_ms']:8} {r['p95_ms']:8} {r['topics_dev']['ndcg@10']:15} "
              f"{r['topics_dev']['recall@10']:12} {r['descriptions_dev']['ndcg@10']:13} "
              f"{r['descriptions_dev']['recall@10']:10}")
    for cfg, a in results["answers"].items():
        print(f"local model {cfg}: {a}")
    print(f"peak RSS: {results['peak_rss_mb']} MB  (JSON: {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
