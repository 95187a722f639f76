"""What the answers to new questions list and miss, against the papers their writers found.

Reads a questions file of `evals/data` (`relevance_new16_questions.jsonl`, `relevance_new20_questions.jsonl`:
one JSON per line with qid, kind, question, relevant and partly ids), asks each question of the
store in the settings (RAG_STORE__PATH), and prints per question the reading, whether it was refused,
and each listed paper marked Y (on the writer's relevant list), p (partly) or . (neither), then the
search's first papers shown beside the list (~Y, ~p, ~.); then the totals: papers listed, of them
relevant and partly, relevant papers not counted, questions refused, the search's first shown, and the
false premises (questions of kind false_premise with no relevant paper) whose answer names the premise as
unsupported (as `rag eval --relevance` counts it).
No judgement by reading: the writers' lists are a key for what a list holds and misses.

    RAG_STORE__PATH=<store of the 2,115 papers> python benchmarks/new_questions.py evals/data/relevance_new16_questions.jsonl
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evals.relevance import listed_of  # noqa: E402
from rag import RAG, Settings  # noqa: E402


def questions_and_product(doc: str, argv: list[str] | None) -> tuple[RAG, list[dict]]:
    """The command line of a benchmark over questions files: the product on the configured store, and
    every question row of the files named."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("questions", type=Path, nargs="+", help="questions files (JSON lines)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    rows = [json.loads(line) for path in args.questions
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return RAG(Settings()), rows


def main(argv: list[str] | None = None) -> int:
    rag, rows = questions_and_product(__doc__, argv)
    totals = {"questions": 0, "listed": 0, "relevant": 0, "partly": 0, "not counted": 0, "refused": 0,
              "search's first": 0, "of them relevant": 0, "false premises": 0, "named": 0}
    for row in rows:
        relevant, partly = set(row["relevant"]), set(row["partly"])
        answer = rag.ask(row["question"])
        totals["questions"] += 1
        totals["refused"] += answer.refused
        if row["kind"] == "false_premise" and not relevant:
            totals["false premises"] += 1
            totals["named"] += listed_of(answer).premise_named
        print(f"{row['qid']} [{row['kind']}] {row['question']}")
        print(f"    read: {answer.reading.note() if answer.reading else '-'}{' | refused' if answer.refused else ''}")
        if answer.refused:
            print(f"    says: {answer.text.splitlines()[0]}")
        for item in answer.items:
            mark = "Y" if item.paper_id in relevant else "p" if item.paper_id in partly else "."
            totals["listed"] += 1
            totals["relevant"] += mark == "Y"
            totals["partly"] += mark == "p"
            print(f"    {mark} {item.title}")
        for item in answer.closest:  # beside the list, never counted: the search's first
            mark = "Y" if item.paper_id in relevant else "p" if item.paper_id in partly else "."
            totals["search's first"] += 1
            totals["of them relevant"] += mark == "Y"
            print(f"    ~{mark} {item.title}")
        missed = relevant - set(answer.matching_ids)
        totals["not counted"] += len(missed)
        print(f"    relevant not counted: {len(missed)} of {len(relevant)}")
    print(" | ".join(f"{k} {v}" for k, v in totals.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
