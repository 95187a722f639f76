"""Before/after table of answer quality from `rag eval` caches, all scored by the same support checker.

Reads the per-question rows that `rag eval --answers` caches under <out>/cache/*.answer-*.jsonl, re-scores
every (cited sentence, cited paper) pair with rag.support (so an older run, scored then by another
method, is measured the same way), and prints one Markdown table per run: support, refusal of
unanswerable questions, false refusals, gold paper cited, time to first text and total time.

    python benchmarks/compare_answers.py reports/eval-before reports/eval-answers
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.grounding.support import check_source  # noqa: E402
from rag.ingest.corpus import load_many  # noqa: E402
from rag.text.citations import claims  # noqa: E402

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "iclr2025" / "papers.jsonl"


def rows_of(out: Path) -> dict[str, list[dict]]:
    by_set: dict[str, list[dict]] = {}
    for f in sorted((out / "cache").glob("*.answer-*.jsonl")):
        name = f.name.split(".answer-")[0]
        by_set.setdefault(name, []).extend(json.loads(line) for line in f.read_text().splitlines() if line.strip())
    return by_set


def score(rows: list[dict], papers: dict) -> dict[str, float | None]:
    supported = pairs = 0
    refused_u = n_u = refused_a = n_a = gold = n_gold = 0
    ttft, total = [], []
    for r in rows:
        answerable = r.get("answerable", True)
        n_a += answerable
        n_u += not answerable
        refused_a += answerable and r["refused"]
        refused_u += (not answerable) and r["refused"]
        t = r.get("timings") or {}
        if t.get("first_token_ms") is not None:
            ttft.append(t["first_token_ms"])
        total.append(t.get("total_ms", 0.0))
        if r.get("gold_ids"):
            n_gold += 1  # a refused answerable question cites no gold paper
        if r["refused"]:
            continue
        ids = r["sources"]
        cited = set()
        for sentence, nums in claims(r["text"]):
            for n in nums:
                if 1 <= n <= len(ids):
                    p = papers[ids[n - 1]]
                    pairs += 1
                    supported += check_source(sentence, p.title, p.abstract, p.authors).supported
                    cited.add(ids[n - 1])
        if r.get("gold_ids"):
            gold += bool(cited & set(r["gold_ids"]))
    pct = lambda a, b: None if not b else a / b  # noqa: E731
    return {
        "questions": len(rows),
        "support": pct(supported, pairs),
        "pairs": pairs,
        "refusal_unanswerable": pct(refused_u, n_u),
        "false_refusal": pct(refused_a, n_a),
        "gold_cited": pct(gold, n_gold),
        "ttft_p50_ms": float(np.percentile(ttft, 50)) if ttft else None,
        "total_p50_ms": float(np.percentile(total, 50)) if total else None,
    }


def fmt(v: float | None, pct: bool = True) -> str:
    if v is None:
        return "–"
    return f"{v:.2f}" if pct else f"{v:,.0f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="output directories of `rag eval --answers` runs")
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    args = ap.parse_args(argv)
    papers = {p.id: p for p in load_many([args.corpus]).papers}
    for out in args.runs:
        print(f"\n### {out}\n")
        print("| set | questions | support (pairs) | unanswerable refused | false refusal | gold cited | first text p50 ms | total p50 ms |")
        print("|---|---|---|---|---|---|---|---|")
        for name, rows in rows_of(out).items():
            s = score(rows, papers)
            print(
                f"| {name} | {s['questions']} | {fmt(s['support'])} ({s['pairs']}) | {fmt(s['refusal_unanswerable'])} | "
                f"{fmt(s['false_refusal'])} | {fmt(s['gold_cited'])} | {fmt(s['ttft_p50_ms'], False)} | "
                f"{fmt(s['total_p50_ms'], False)} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
