"""Opening turns of the conversation set: what the product listed for each seed question.

A conversation's first turn is a list question; its follow-ups refer to the papers that answer
showed ("the second one", "[3]", "these"). So that the expected references of the set do not move
when retrieval or admission is tuned, the opening answer is recorded once, here, and the scorer
sends it as the conversation's history (as a client that kept its history would).

For each seed question (one per line of `--questions`: {"sid", "question"}) this writes
{"sid", "question", "listed": [paper ids in the order shown], "related": [...], "matching": n} to
`--out`, and a readable packet per seed (titles, decisions, authors, abstracts) to `--packets` for
the people who write the follow-ups.

Usage: RAG_STORE__PATH=<store with the 2,115 papers> python evals/data/build_conversation_seeds.py \
    --questions seeds_in.jsonl --out evals/data/conversation_seeds.jsonl --packets DIR
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--packets", type=Path, help="folder for readable packets (optional)")
    args = ap.parse_args(argv)

    from rag import RAG

    rag = RAG()
    seeds = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    rows = []
    for seed in seeds:
        answer = rag.ask(seed["question"])
        rows.append({
            "sid": seed["sid"],
            "question": seed["question"],
            "listed": [it.paper_id for it in answer.items],
            "related": [it.paper_id for it in answer.related],
            "matching": len(answer.matching_ids),
        })
        print(f"{seed['sid']}: {len(answer.items)} listed, {len(answer.related)} related", flush=True)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    if args.packets:
        args.packets.mkdir(parents=True, exist_ok=True)
        papers = rag.retriever.papers()
        for r in rows:
            lines = [f"# {r['sid']}: {r['question']}", ""]
            for group in ("listed", "related"):
                lines.append(f"## {group}")
                for i, pid in enumerate(r[group], start=1):
                    row = papers.rows([pid])[pid]
                    lines += [f"### {group} {i}: {row.title}", f"- paper_id: {pid}", f"- decision: {row.decision}",
                              f"- authors: {'; '.join(row.authors)}", f"- url: {row.url}", "", row.text, ""]
            (args.packets / f"{r['sid']}.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
