"""How precise the admission of papers that state the question in other words is, per threshold.

For each question of the given files (writers' lists of relevant and partly relevant papers), the
question is read and its candidates admitted by words as the product does; then
`rag.grounding.evidence.admit_worded_otherwise` runs with each cosine threshold, with the product's
condition (the words admit fewer than `worded_below` of the first ten) and without it, and the papers
it adds are counted against the writers' lists. A threshold that admits mostly papers nobody listed
shows here before it is trusted.

    RAG_STORE__PATH=<store of the 2,115 papers> python benchmarks/worded_otherwise.py \\
        evals/data/relevance_new_{t,v,w,x,y,z,u}20_questions.jsonl
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.new_questions import questions_and_product  # noqa: E402
from rag.grounding.admission import admit  # noqa: E402
from rag.grounding.evidence import EvidenceConfig, admit_worded_otherwise  # noqa: E402
from rag.text.phrasing import restate  # noqa: E402
from rag.text.reading import read  # noqa: E402

THRESHOLDS = (0.45, 0.5, 0.55, 0.6, 0.65)


def main(argv: list[str] | None = None) -> int:
    rag, rows = questions_and_product(__doc__, argv)
    embed = rag.engine.sentence_embedder()
    stats = rag.retriever.term_stats()
    base = EvidenceConfig()
    configs = {(t, gated): replace(base, worded_otherwise=t, worded_below=base.worded_below if gated else 10**6)
               for t in THRESHOLDS for gated in (True, False)}
    counts = {key: [0, 0, 0] for key in configs}  # added, relevant, partly
    rows = [row for row in rows if row["relevant"]]
    n = len(rows)
    for row in rows:
        asked = restate(row["question"])
        reading = read(asked)
        sources = rag.retrieve(asked, top_k=50).sources
        if reading.topic is None or reading.asks == "reason":
            continue
        ids = {s.number: s.paper_id for s in sources}
        for key, cfg in configs.items():
            adm = admit(reading, sources, stats)
            added = admit_worded_otherwise(adm, [s.number for s in sources], asked, embed, cfg)
            counts[key][0] += len(added)
            counts[key][1] += sum(ids[a] in row["relevant"] for a in added)
            counts[key][2] += sum(ids[a] in row.get("partly", []) for a in added)
    print(f"{n} questions; papers admitted in other words among the first {base.worded_rank} candidates")
    print(f"{'cosine':>6} {'condition':>28} {'added':>6} {'relevant':>9} {'partly':>7} {'share relevant':>15}")
    for (t, gated), (added, rel, part) in counts.items():
        cond = f"words admit < {base.worded_below} of first {base.worded_rank}" if gated else "none"
        print(f"{t:>6} {cond:>28} {added:>6} {rel:>9} {part:>7} {rel / max(added, 1):>15.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
