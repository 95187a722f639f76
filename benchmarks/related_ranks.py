"""Where the search ranks the related papers an answer shows beside its list, and how many are on the writers' lists.

Asks each question of the questions files (as `new_questions.py` does) and, for every answer that lists papers,
counts its "Related, but …" papers by the search's rank of each (first five, sixth to tenth, past the tenth) and
whether the writer put it on the question's relevant or partly list. The rule of docs/relevance.md §5y (a related
paper beside a list must be among the search's first five, or named) was chosen on these counts; run it on the
commit before that rule (b190285) and on any later one to compare.

Then, over the answers that list nothing and show papers closest to a list request (questions of a kind other than
false_premise), the papers shown with a note of what their abstract does not state (related to the topic; among the
search's first ten or past them) and those without one (the search's first matches: under "Also among the search's
first matches" before §5z, in the same list after it), and how many of each are on the writers' lists: §5z's counts.

    RAG_STORE__PATH=<store of the 2,115 papers> python benchmarks/related_ranks.py evals/data/relevance_new*_questions.jsonl
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.new_questions import questions_and_product  # noqa: E402
from rag.text.phrasing import restate  # noqa: E402

BANDS = ("first 5", "6-10", "past 10")


def main(argv: list[str] | None = None) -> int:
    rag, rows = questions_and_product(__doc__, argv)
    shown: Counter[str] = Counter()
    on_lists: Counter[str] = Counter()
    closest: Counter[str] = Counter()
    closest_on: Counter[str] = Counter()
    for row in rows:
        answer = rag.ask(row["question"])
        wanted = set(row["relevant"]) | set(row["partly"])
        if answer.refused and not answer.items and row["kind"] != "false_premise" and answer.related:
            order = [s.paper_id for s in rag.engine.retriever.retrieve(restate(row["question"])).sources]
            for item in answer.related + answer.closest:
                group = "search's first" if not item.missing else "noted, first 10" \
                    if item.paper_id in order[:10] else "noted, past 10"
                closest[group] += 1
                closest_on[group] += item.paper_id in wanted
        if answer.refused or not answer.items or not answer.related:
            continue
        order = [s.paper_id for s in rag.engine.retriever.retrieve(restate(row["question"])).sources]
        for item in answer.related:
            rank = order.index(item.paper_id) if item.paper_id in order else len(order)
            band = BANDS[0] if rank < 5 else BANDS[1] if rank < 10 else BANDS[2]
            shown[band] += 1
            on_lists[band] += item.paper_id in wanted
    print(f"questions {len(rows)} | related beside lists {sum(shown.values())}, on the writers' lists "
          f"{sum(on_lists.values())}")
    print(" | ".join(f"{band}: {on_lists[band]} of {shown[band]} on the lists" for band in BANDS))
    print("closest to a list request, nothing listed: " + " | ".join(
        f"{group}: {closest_on[group]} of {closest[group]} on the lists"
        for group in ("noted, first 10", "noted, past 10", "search's first")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
