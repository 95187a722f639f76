"""Does an answer answer? Listed papers and quoted sentences scored against judgements made by reading.

`evals/data/relevance_labels.jsonl` holds, per question, the candidate papers a reader judged: is the
paper relevant to the question, constraints included (yes / partly / no, and what it misses), and for
each sentence of a relevant paper's abstract, does it answer the question (answers / partly /
background / problem / tangential). The readers never saw this scorer or the product's choices.

For each answer this module reports:
- item relevance: the share of listed papers judged yes / partly / no;
- answer rate: the share of listed papers whose quote holds a sentence judged to answer
  (item_answers), and of quoted sentences judged to answer (sentence_answers); background-only
  quotes: listed papers whose every quoted sentence is background or a problem statement;
- admission precision and recall: listed (or counted) papers against the papers judged yes;
- false premises: questions with no relevant paper, answered by naming the unsupported premise.

`rag eval --relevance` runs the product and two reference configurations on the same store: the
answer before constraints were read (`RAG_ANSWER__ADMISSION=false`) and a known-bad one (the first
`k` retrieved papers with each abstract's first sentence). A metric that does not rank the known-bad
configuration last is not measuring relevance.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.grounding.verify import PREMISE_NAMED
from rag.text.citations import split_sentences

from .datasets import BUILTIN_DIR
from .errors import EvalError

logger = logging.getLogger(__name__)

LABELS = BUILTIN_DIR / "relevance_labels.jsonl"
PAPER_LABELS = ("yes", "partly", "no")
SENTENCE_LABELS = ("answers", "partly", "background", "problem", "tangential")
BACKGROUND = frozenset({"background", "problem"})


@dataclass
class PaperJudgement:
    paper_id: str
    relevant: str
    missing: str = ""
    sentences: dict[str, str] = field(default_factory=dict)  # normalised sentence text → label


@dataclass
class Question:
    qid: str
    kind: str
    question: str
    papers: dict[str, PaperJudgement]

    @property
    def relevant_ids(self) -> set[str]:
        return {p for p, j in self.papers.items() if j.relevant == "yes"}


def _key(sentence: str) -> str:
    """A sentence's key in the labels: a digest of its text with spaces and case folded."""
    return hashlib.sha1(" ".join(sentence.split()).strip().lower().encode("utf-8")).hexdigest()[:16]


def load_labels(path: Path = LABELS) -> list[Question]:
    """The judged questions; a bad line is an error naming the file and line."""
    if not path.is_file():
        raise EvalError(f"relevance labels missing: {path}")
    out: list[Question] = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            papers = {}
            for p in row["papers"]:
                if p["relevant"] not in PAPER_LABELS:
                    raise ValueError(f"relevant must be one of {PAPER_LABELS}, not {p['relevant']!r}")
                sents = {}
                for s in p.get("sentences", []):
                    if s["label"] not in SENTENCE_LABELS:
                        raise ValueError(f"sentence label must be one of {SENTENCE_LABELS}, not {s['label']!r}")
                    sents[s["key"] if "key" in s else _key(s["text"])] = s["label"]
                papers[p["paper_id"]] = PaperJudgement(p["paper_id"], p["relevant"], p.get("missing", ""), sents)
            out.append(Question(row["qid"], row["kind"], row["question"], papers))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise EvalError(f"{path}:{i}: {exc}") from exc
    return out


@dataclass
class Listed:
    """What one answer shows: the papers listed as answers with their quoted sentences."""

    items: list[tuple[str, list[str]]]  # (paper id, quoted sentences)
    counted: list[str]  # every paper the answer says meets the question
    refused: bool
    premise_named: bool
    closest: list[str] = field(default_factory=list)  # the search's first papers shown beside the list


def listed_of(answer: Any) -> Listed:
    """The listed papers of a product Answer (related papers are not listed as answers)."""
    items = [(it.paper_id, list(it.sentences)) for it in answer.items]
    counted = list(answer.matching_ids) or [pid for pid, _ in items]
    premise = answer.refused and any(said in answer.text for said in PREMISE_NAMED)
    return Listed(items, counted, answer.refused, premise, [it.paper_id for it in answer.closest])


def lead_baseline(answer: Any) -> Listed:
    """Known-bad: the first shown sources as they were retrieved, each with its abstract's first sentence."""
    k = max(len(answer.items), 1) if not answer.refused else 0
    srcs = sorted(answer.sources, key=lambda s: -s.score)[: max(k, 5 if not answer.refused else 0)]
    items = [(s.paper_id, (split_sentences(s.text) or [s.text])[:1]) for s in srcs]
    return Listed(items, [pid for pid, _ in items], not items, False)


def score(questions: Sequence[Question], listed: dict[str, Listed]) -> dict[str, Any]:
    """Relevance figures over the questions that were answered (see the module docstring)."""
    paper = Counter[str]()
    sentence = Counter[str]()
    background_only = items_judged = unjudged = items_answering = 0
    tp = fp = fn = 0
    premise_total = premise_named = 0
    beside = Counter[str]()  # judgements of the search's first papers shown beside the lists
    per_kind: dict[str, Counter[str]] = {}
    for q in questions:
        got = listed.get(q.qid)
        if got is None:
            continue
        kind = per_kind.setdefault(q.kind, Counter())
        if not q.relevant_ids and q.kind == "false_premise":
            premise_total += 1
            premise_named += got.premise_named
            kind["premise_named"] += got.premise_named
        for pid, sents in got.items:
            j = q.papers.get(pid)
            if j is None:
                unjudged += 1
                continue
            items_judged += 1
            paper[j.relevant] += 1
            kind[f"paper_{j.relevant}"] += 1
            labels = [j.sentences.get(_key(s), "tangential" if j.relevant == "no" else "unjudged") for s in sents]
            for lab in labels:
                sentence[lab] += 1
                kind[f"sentence_{lab}"] += 1
            if labels and all(lab in BACKGROUND for lab in labels):
                background_only += 1
            items_answering += "answers" in labels
        for pid in got.closest:
            j = q.papers.get(pid)
            beside[j.relevant if j is not None else "unjudged"] += 1
        counted = set(got.counted)
        judged_counted = {p for p in counted if p in q.papers}
        tp += len(judged_counted & q.relevant_ids)
        fp += len({p for p in judged_counted if q.papers[p].relevant == "no"})
        fn += len(q.relevant_ids - counted)
    n_sent = sum(v for k, v in sentence.items() if k != "unjudged")

    def rate(c: Counter[str], key: str, total: int) -> float | None:
        return round(c[key] / total, 3) if total else None

    return {
        "items_judged": items_judged,
        "items_unjudged": unjudged,
        "paper_yes": rate(paper, "yes", items_judged),
        "paper_partly": rate(paper, "partly", items_judged),
        "paper_no": rate(paper, "no", items_judged),
        "item_answers": round(items_answering / items_judged, 3) if items_judged else None,
        "sentences_judged": n_sent,
        "sentence_answers": rate(sentence, "answers", n_sent),
        "sentence_partly": rate(sentence, "partly", n_sent),
        "sentence_background": round((sentence["background"] + sentence["problem"]) / n_sent, 3) if n_sent else None,
        "background_only_items": round(background_only / items_judged, 3) if items_judged else None,
        "admission_precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "admission_recall": round(tp / (tp + fn), 3) if tp + fn else None,
        "false_premise_named": round(premise_named / premise_total, 3) if premise_total else None,
        "closest_judged": sum(v for k, v in beside.items() if k != "unjudged"),
        "closest_yes": rate(beside, "yes", sum(v for k, v in beside.items() if k != "unjudged")),
        "closest_no": rate(beside, "no", sum(v for k, v in beside.items() if k != "unjudged")),
        "per_kind": {k: dict(v) for k, v in sorted(per_kind.items())},
    }


HEADLINE = (
    "paper_yes", "paper_no", "item_answers", "sentence_answers", "sentence_background", "background_only_items",
    "admission_precision", "admission_recall", "false_premise_named", "items_judged", "items_unjudged",
    "closest_yes", "closest_no", "closest_judged",
    "first_text_p50_ms", "first_text_p95_ms",
)


def table(results: dict[str, dict[str, Any]]) -> str:
    """The headline figures of each configuration side by side (Markdown)."""
    names = list(results)
    lines = ["| metric | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for m in HEADLINE:
        cells = ["–" if results[n].get(m) is None else str(results[n][m]) for n in names]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run(
    rag_factory: Any, questions: Sequence[Question], configs: Iterable[tuple[str, dict[str, Any]]],
    progress: bool = True,
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Ask every question in each configuration; (figures per configuration, answers per configuration)."""
    from tqdm import tqdm

    results: dict[str, dict[str, Any]] = {}
    answers: dict[str, dict[str, Any]] = {}
    for name, overrides in configs:
        rag = rag_factory(overrides)
        got: dict[str, Any] = {}
        for q in tqdm(questions, desc=f"relevance: {name}", disable=not progress):
            got[q.qid] = rag.ask(q.question)
        answers[name] = got
        results[name] = score(questions, {qid: listed_of(a) for qid, a in got.items()})
        firsts = sorted(a.timings.first_token_ms for a in got.values() if a.timings.first_token_ms is not None)
        if firsts:
            results[name]["first_text_p50_ms"] = round(firsts[len(firsts) // 2])
            results[name]["first_text_p95_ms"] = round(firsts[min(len(firsts) - 1, int(0.95 * len(firsts)))])
        if name == "product":
            results["known-bad: first sentences"] = score(
                questions, {qid: lead_baseline(a) for qid, a in got.items()}
            )
    return results, answers
