"""Candidate pools for the relevance labels: what readers judge, without seeing any scorer.

For each question of a question file (JSONL: qid, kind, question, relevant_ids?, partial_ids?) the
pool is the union, in a seeded shuffle, of
- the first `--depth` papers the hybrid retriever returns (the product's candidates),
- the papers the product lists, with admission on and off (so every configuration's choices can be
  scored),
- the papers the question's writer found by searching the corpus (relevant_ids, partial_ids).
Each paper is written with its abstract cut into the product's sentences (rag.text.citations), numbered,
so a reader's sentence labels match the sentences an answer quotes.

Output: one JSON object per question (qid, kind, question, papers: [{paper_id, title, sentences}])
in `--out`, and the same as readable Markdown packets split into `--parts` files for readers.

Usage: RAG_STORE__PATH=<store with the 2,115 papers> python evals/data/build_relevance_pool.py \
    --questions Q.jsonl --out pool.jsonl --packets DIR --parts 6

Readers return one JSON line per (qid, paper_id): relevant, missing, and a label per sentence number.
`--merge LABELS...` joins them with the pool into `relevance_labels.jsonl` (sentence numbers become
a digest of the sentence's text, so the labels do not depend on how a later version cuts sentences).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path


def sentence_key(text: str) -> str:
    from evals.relevance import _key

    return _key(text)


def merge(pool_path: Path, label_paths: list[Path], questions_path: Path, out: Path) -> None:
    """The readers' labels joined with the pool's sentences and the writer's notes."""
    pool = {r["qid"]: r for r in map(json.loads, pool_path.read_text().splitlines())}
    notes = {r["qid"]: r for r in map(json.loads, questions_path.read_text().splitlines())}
    labels: dict[str, dict[str, dict]] = {}
    for path in label_paths:
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                labels.setdefault(row["qid"], {})[row["paper_id"]] = row
    rows = []
    for qid in sorted(labels):
        q = pool[qid]
        papers = []
        for p in q["papers"]:
            lab = labels[qid].get(p["paper_id"])
            if lab is None:
                raise SystemExit(f"{qid}: paper {p['paper_id']} has no label")
            sents = [
                {"key": sentence_key(p["sentences"][int(i)]), "label": label}
                for i, label in sorted(lab.get("sentences", {}).items(), key=lambda kv: int(kv[0]))
            ]
            papers.append({"paper_id": p["paper_id"], "relevant": lab["relevant"], "missing": lab.get("missing", ""),
                           "sentences": sents})
        rows.append({"qid": qid, "kind": q["kind"], "question": q["question"],
                     "constraints": notes.get(qid, {}).get("constraints", []), "papers": papers})
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"{len(rows)} questions, {sum(len(r['papers']) for r in rows)} judged papers -> {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--packets")
    ap.add_argument("--merge", nargs="+", type=Path, metavar="LABELS", help="readers' label files to join")
    ap.add_argument("--pool", type=Path, help="the pool file written before (with --merge)")
    ap.add_argument("--parts", type=int, default=6)
    ap.add_argument("--depth", type=int, default=15)
    ap.add_argument("--cap", type=int, default=24, help="most papers per question")
    args = ap.parse_args()
    if args.merge:
        merge(args.pool, args.merge, Path(args.questions), Path(args.out))
        return

    from rag.pipeline import RAG
    from rag.settings import Settings
    from rag.text.citations import split_sentences

    on = RAG()
    off = RAG(Settings(answer={"admission": False, "cache_size": 0}))
    papers = on.retriever.papers()
    questions = [json.loads(line) for line in Path(args.questions).read_text().splitlines() if line.strip()]
    rows = []
    for q in questions:
        text = q["question"]
        retrieved = [s.paper_id for s in on.retriever.retrieve(text, pool=args.depth).sources][: args.depth]
        listed = []
        for rag in (on, off):
            a = rag.ask(text)
            listed += [it.paper_id for it in a.items] + [it.paper_id for it in a.related]
        writer = list(q.get("relevant_ids", [])) + list(q.get("partial_ids", []))
        ids = list(dict.fromkeys(listed + writer + retrieved))[: args.cap]
        random.Random(q["qid"]).shuffle(ids)
        rows.append({
            "qid": q["qid"], "kind": q["kind"], "question": text,
            "papers": [
                {"paper_id": pid, "title": papers.title(pid),
                 "sentences": [s for s in split_sentences(papers.text(pid)) if s.strip()]}
                for pid in ids if pid in papers
            ],
        })
    Path(args.out).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    out = Path(args.packets)
    out.mkdir(parents=True, exist_ok=True)
    for part in range(args.parts):
        chunk = rows[part :: args.parts]
        lines = []
        for r in chunk:
            lines.append(f"# {r['qid']} ({r['kind']}): {r['question']}\n")
            for p in r["papers"]:
                lines.append(f"## paper {p['paper_id']}: {p['title']}")
                lines.extend(f"  s{i}: {s}" for i, s in enumerate(p["sentences"]))
                lines.append("")
        (out / f"part{part + 1}.md").write_text("\n".join(lines))
        (out / f"part{part + 1}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in chunk))
    print(f"{len(rows)} questions, {sum(len(r['papers']) for r in rows)} papers -> {args.out}, {out}/part*.md")


if __name__ == "__main__":
    main()
