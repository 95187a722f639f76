"""Follow-up condensing: the LLM's rewrite (checked, with the rule fallback) against the rules alone.

For each answerable seed question: answer it, then ask follow-ups that refer back ("it", "they");
each follow-up is condensed both ways and retrieved; a hit is the first question's gold paper at
rank 1 (and in the top 5). Also reports the CPU time each way spends condensing.

    .venv/bin/python benchmarks/bench_condense.py --store /tmp/fullstore --corpus ../shared/data/iclr2025/papers.jsonl
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from rag import RAG, Settings  # noqa: E402
from rag.chat.conversation import ChatTurn, condense, fallback_question  # noqa: E402
from rag.cli import setup_logging  # noqa: E402

FOLLOW_UPS = (
    "What benchmark does it use?",
    "What are its main limitations?",
    "How does it work?",
    "Which datasets do they evaluate on?",
    "What results do they report?",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True, help="embedded store directory (ingested if empty)")
    parser.add_argument("--corpus", default=None, help="corpus file to ingest into an empty store")
    parser.add_argument("--questions", default=str(REPO / "evals" / "data" / "seed_qa.jsonl"))
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    args = parser.parse_args(argv)
    setup_logging("WARNING")
    rag = RAG(Settings(store={"path": args.store, "auto_seed": args.corpus is None}))
    if args.corpus and rag.store.count_chunks() == 0:
        rag.ingest([args.corpus], progress=True)
    rows = [json.loads(line) for line in Path(args.questions).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("answerable", True) and r.get("gold_ids")][: args.limit]
    stats = {way: {"hit1": 0, "hit5": 0, "cpu": 0.0, "n": 0} for way in ("llm", "rules")}
    methods: dict[str, int] = {}
    for i, row in enumerate(rows, start=1):
        first = rag.ask(row["query"])
        history = [ChatTurn(role="user", content=row["query"]),
                   ChatTurn(role="assistant", content=first.text, citations=first.citations)]
        gold = set(row["gold_ids"])
        for follow in FOLLOW_UPS:
            for way in ("llm", "rules"):
                t0 = time.process_time()
                if way == "llm":
                    rewrite = condense(rag.llm, follow, history)
                    methods[rewrite.method] = methods.get(rewrite.method, 0) + 1
                    standalone = rewrite.question
                else:
                    standalone = fallback_question(follow, history)
                stats[way]["cpu"] += time.process_time() - t0
                ids = [s.paper_id for s in rag.retrieve(standalone, top_k=5).sources]
                stats[way]["n"] += 1
                stats[way]["hit1"] += bool(ids[:1] and ids[0] in gold)
                stats[way]["hit5"] += bool(gold & set(ids))
        n = max(stats["llm"]["n"], 1)
        print(f"{i}/{len(rows)}: hit@1 llm {stats['llm']['hit1'] / n:.3f} rules {stats['rules']['hit1'] / n:.3f}; "
              f"LLM outcomes {methods}", file=sys.stderr, flush=True)
    print(f"{len(rows)} first questions x {len(FOLLOW_UPS)} follow-ups; LLM condense outcomes: {methods}")
    print("| condensing | hit@1 | hit@5 | CPU s per follow-up |\n|---|---|---|---|")
    for way, s in stats.items():
        n = max(s["n"], 1)
        print(f"| {way} | {s['hit1'] / n:.3f} | {s['hit5'] / n:.3f} | {s['cpu'] / n:.3f} |")
    return 0


if __name__ == "__main__":
    logging.getLogger().setLevel(logging.WARNING)
    sys.exit(main())
