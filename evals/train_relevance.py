"""Train the relevance model (rag/grounding/scoring.py) on the writers' question sets and check it on
sets it was not trained on.

    python -m evals.train_relevance record --store DIR --out features.jsonl [--sets FILE ...]
    python -m evals.train_relevance fit features.jsonl [...] [--threshold 0.45] [--model rag/data/relevance_model.json]

`record` answers every question of the sets with the rules alone (relevance model off) and writes, per
question, each pooled candidate's features with whether the writer listed it. `fit` reports, set by set
left out (the model trained on the other sets), what the rules list and what the model lists among the
first ten: papers on the writers' lists, their share of what is listed, and false premises given a list;
then trains on every set and writes the model (unless --no-write).
"""

from __future__ import annotations

import argparse
import glob
import json
import logging
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger("evals.train_relevance")

DEFAULT_SETS = "evals/data/relevance_new*_questions.jsonl"
SHOWN = 10  # an answer shows this many papers


def record(sets: list[str], store: str | None, out: Path, progress: bool) -> None:
    from rag import RAG, Settings
    from rag.text.phrasing import restate
    from rag.text.query import is_question

    overrides: dict[str, Any] = {"answer": {"relevance_model": "off", "cache_size": 0}}
    if store:
        overrides["store"] = {"path": store}
    rag = RAG(Settings(**overrides))
    engine = rag.engine
    questions = [(Path(f).name, json.loads(line)) for f in sets for line in open(f, encoding="utf-8") if line.strip()]
    with out.open("w", encoding="utf-8") as fh:
        for i, (name, q) in enumerate(questions, 1):
            asked = restate(q["question"])
            retrieval = engine.retriever.retrieve(asked, {}, pool=rag.settings.retrieval.pool_k)
            verdict = engine.assess(asked, retrieval, engine.sentence_embedder(), record=True)
            ids = {s.number: s.paper_id for s in retrieval.sources}
            fh.write(json.dumps({
                "set": name, "qid": q["qid"], "relevant": q["relevant"], "partly": q.get("partly", []),
                "listed": [ids[n] for n in verdict.matching] if verdict.answerable else [],
                "features": {ids[n]: v.tolist() for n, v in verdict.features.items()},
                "barred": [ids[n] for n in verdict.barred],
                "stay": [ids[n] for n in verdict.stay],
                "field": not is_question(asked),
            }) + "\n")
            if progress and (i % 25 == 0 or i == len(questions)):
                print(f"\r{i}/{len(questions)} questions", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    logger.info("wrote %s (%d questions)", out, len(questions))


def _examples(rows: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for r in rows:
        rel, part = set(r["relevant"]), set(r["partly"])
        for pid, f in r["features"].items():
            if pid in part:
                continue  # neither on the list nor off it
            xs.append(f)
            ys.append(1.0 if pid in rel else 0.0)
    return np.asarray(xs, dtype=np.float64), np.asarray(ys)


def _listed(model: Any, row: dict[str, Any]) -> list[str]:
    from rag.grounding.scoring import relist

    ids = list(row["features"])
    numbers = {pid: i for i, pid in enumerate(ids)}
    feats = {numbers[p]: np.asarray(row["features"][p]) for p in ids}
    base = [numbers[p] for p in row["listed"] if p in numbers]
    if not row["features"] or not row["listed"]:
        return list(row["listed"])
    out, _ = relist(model, feats, base, keep=[numbers[p] for p in row.get("stay", []) if p in numbers],
                    barred={numbers[p] for p in row.get("barred", []) if p in numbers}, field=row.get("field", True))
    return [ids[n] for n in out]


def _count(total: Counter[str], row: dict[str, Any], listed: list[str]) -> None:
    shown, rel = listed[:SHOWN], set(row["relevant"])
    if not rel:  # a false premise: nothing should be listed
        total["premises"] += 1
        total["premises_listed"] += bool(shown)
        return
    total["questions"] += 1
    total["listed"] += len(shown)
    total["on_list"] += len(set(shown) & rel)
    total["partly"] += len(set(shown) & set(row["partly"]))
    total["gold"] += len(rel)


def _line(name: str, t: Counter[str]) -> str:
    listed = max(t["listed"], 1)
    return (f"{name:10s} listed {t['listed']:5d}  on the writers' lists {t['on_list']:5d} ({t['on_list'] / listed:.3f},"
            f" with partly {(t['on_list'] + t['partly']) / listed:.3f})  of theirs found {t['on_list'] / max(t['gold'], 1):.3f}"
            f"  false premises with a list {t['premises_listed']}/{t['premises']}")


def fit_and_check(files: list[Path], threshold: float, ridge: float, model_path: Path | None) -> dict[str, Counter[str]]:
    from rag.grounding.scoring import fit

    rows = [json.loads(line) for f in files for line in open(f, encoding="utf-8") if line.strip()]
    sets = sorted({r["set"] for r in rows})
    totals: dict[str, Counter[str]] = {"rules": Counter(), "model": Counter()}
    for left_out in sets:
        model = fit(*_examples([r for r in rows if r["set"] != left_out]), threshold=threshold, ridge=ridge)
        for r in rows:
            if r["set"] == left_out:
                _count(totals["rules"], r, r["listed"])
                _count(totals["model"], r, _listed(model, r))
    print(f"{len(rows)} questions of {len(sets)} sets, each set answered by a model trained on the others:")
    for name, t in totals.items():
        print(_line(name, t))
    if model_path is not None:
        x, y = _examples(rows)
        model = fit(x, y, threshold=threshold, ridge=ridge,
                    trained_on=f"{len(sets)} writers' sets, {len(rows)} questions, {len(y)} candidates ({int(y.sum())} on a list)")
        model_path.write_text(json.dumps(model.to_json(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {model_path}")
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.train_relevance", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="answer the sets with the rules alone and write each candidate's features")
    rec.add_argument("--sets", nargs="+", default=None, help=f"question files (default: {DEFAULT_SETS})")
    rec.add_argument("--store", default=None, help="the store to answer from (default: the configured one)")
    rec.add_argument("--out", type=Path, required=True, help="features file to write (JSON Lines)")
    rec.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    fitp = sub.add_parser("fit", help="check the model set by set left out, then train it on every set")
    fitp.add_argument("features", nargs="+", type=Path, help="files `record` wrote")
    fitp.add_argument("--threshold", type=float, default=0.45, help="probability at which a paper is listed")
    fitp.add_argument("--ridge", type=float, default=1.0, help="L2 penalty of the logistic regression")
    fitp.add_argument("--model", type=Path, default=Path("rag/data/relevance_model.json"), help="model file to write")
    fitp.add_argument("--no-write", action="store_true", help="only report; write no model")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.command == "record":
        sets = args.sets or sorted(glob.glob(DEFAULT_SETS))
        if not sets:
            parser.error(f"no question files match {DEFAULT_SETS}")
        record(sets, args.store, args.out, not args.no_progress)
    else:
        fit_and_check(args.features, args.threshold, args.ridge, None if args.no_write else args.model)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
