"""Answers over every question set at once: how many are refused, how many cite a gold paper.

Asks each question of the dev sets (../shared/evalsets: topics_dev, descriptions_dev) and the in-repo
sets (evals/data: short_qa, seed_qa, unanswerable, unanswerable_more, authors, named, similar) with the
configured settings (answer cache off) on the store of RAG_STORE__PATH, which must hold the 2,115
papers. Prints per set the refusal rate, the share of questions with gold papers whose answer cites
one, every answerable question that was refused (a false refusal), and the time to the first text.
The figures the closing notes quote as "other sets" come from this script.

    RAG_STORE__PATH=/tmp/store2115 .venv/bin/python benchmarks/answer_sets.py
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rag import RAG, Settings  # noqa: E402
from rag.cli import setup_logging  # noqa: E402

logger = logging.getLogger("answer_sets")
SHARED = REPO.parent / "shared" / "evalsets"
DATA = REPO / "evals" / "data"
SETS = {
    "topics_dev": SHARED / "topics_dev.jsonl",
    "descriptions_dev": SHARED / "descriptions_dev.jsonl",
    **{name: DATA / f"{name}.jsonl" for name in
       ("short_qa", "seed_qa", "unanswerable", "unanswerable_more", "authors", "named", "similar")},
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated set names (default: all)")
    parser.add_argument("--log-level", default="WARNING")
    args = parser.parse_args(argv)
    setup_logging(args.log_level)
    rag = RAG(Settings(answer={"cache_size": 0}))
    first_text: list[float] = []
    for name in args.sets.split(","):
        path = SETS[name]
        items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        refused, cited, with_gold, false_refusals = 0, 0, 0, []
        for i, item in enumerate(items, start=1):
            answer = rag.ask(item["query"])
            if answer.timings.first_token_ms:
                first_text.append(answer.timings.first_token_ms)
            refused += answer.refused
            if answer.refused and item.get("answerable", True):
                false_refusals.append(item["query"])
            if item.get("gold_ids"):
                with_gold += 1
                cited += bool({c.paper_id for c in answer.citations if not answer.refused} & set(item["gold_ids"]))
            logger.info("%s: %d / %d", name, i, len(items))
        print(f"{name:18s} n={len(items):3d} refused={refused / len(items):.3f} "
              f"gold_cited={cited / max(with_gold, 1):.3f}", flush=True)
        for q in false_refusals:
            print(f"    false refusal: {q}")
    if first_text:
        ordered = sorted(first_text)
        print(f"first text ms: p50 {statistics.median(ordered):.0f}, p95 {ordered[int(0.95 * (len(ordered) - 1))]:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
