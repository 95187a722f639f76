"""`rag eval`: run an offline evaluation, write the report, optionally check it against thresholds."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rag.settings import Settings

from .config import EvalSettings, RunConfig, parse_retrievers, preset
from .errors import EvalError

logger = logging.getLogger(__name__)

DESCRIPTION = """\
Score the pipeline offline on datasets of questions with gold papers: paper-level retrieval metrics
(hit@k, recall@k, MRR, nDCG@10) for several retrievers on one store, and with --answers the answer
metrics (refusals, citation validity/coverage/support, latency, tokens). Writes report.json,
report.md and plots/ to --out, with bootstrap 95% confidence intervals. The eval store and a
per-question cache live in --out, so an interrupted run resumes where it stopped.

Presets: dev = 2,115-paper corpus, topics_dev + descriptions_dev (+ the unanswerable set for the
refusal-threshold calibration), dense/BM25/hybrid, retrieval only; ci = 19-paper seed corpus,
the in-repo seed_qa + unanswerable sets, retrieval and answers with the configured LLM (default:
the bundled local model); answers = the same two sets over the 2,115-paper corpus.
Flags given with a preset override it. A judge LLM for citation support, faithfulness and
relevancy is configured with RAG_EVAL__JUDGE_BASE_URL / RAG_EVAL__JUDGE_MODEL / RAG_EVAL__JUDGE_API_KEY
(or the flags below); without one, citation support uses the support checker (rag/grounding/support.py),
whose precision and recall on evals/data/support_labels.jsonl every answers report prints
(`rag eval --support-check` prints them alone).
"""

EPILOG = """\
examples:
  rag eval --preset dev
  rag eval --preset ci --check evals/thresholds/ci.json
  rag eval --corpus ../shared/data/iclr2025/papers.jsonl --dataset topics_dev --retrievers dense,hybrid --limit 20
"""


def add_eval_command(sub: Any) -> None:
    """Register the `eval` subcommand on the `rag` CLI."""
    p = sub.add_parser(
        "eval",
        help="evaluate retrieval, citations, refusals and latency offline",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--preset", choices=["dev", "ci", "answers"], help="a named run (see above)")
    p.add_argument("--corpus", help="corpus file ingested into the eval store (.jsonl, .json, .csv)")
    p.add_argument(
        "--store", type=Path, default=None,
        help="eval store directory shared by runs with other --out folders: a corpus it already holds "
        "(same file, same embedding model) is not ingested again (default: <out>/store)",
    )
    p.add_argument(
        "--dataset",
        action="append",
        metavar="PATH_OR_NAME",
        help="dataset JSONL, or a name: seed_qa, unanswerable, topics_dev, descriptions_dev (repeatable)",
    )
    p.add_argument("--retrievers", help="comma-separated retrievers to compare (default: dense,bm25,hybrid)")
    p.add_argument(
        "--answers",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also generate and score answers with the configured LLM",
    )
    p.add_argument(
        "--answer-retrievers",
        help="retrievers used for answers (default: RAG_RETRIEVAL__MODE); comma-separated",
    )
    p.add_argument(
        "--top-k",
        type=int,
        dest="depth",
        metavar="N",
        help="papers retrieved per question for retrieval metrics (default 100; answers use "
        "RAG_RETRIEVAL__TOP_K sources)",
    )
    p.add_argument("--limit", type=int, metavar="N", help="only the first N questions of each dataset")
    p.add_argument(
        "--answer-limit",
        type=int,
        metavar="N",
        help="answer only the first N answerable questions of each dataset; unanswerable ones are all "
        "asked (the ci preset uses 6; 0 = all)",
    )
    p.add_argument("--out", metavar="DIR", help="output directory (default: reports/eval or the preset's)")
    p.add_argument(
        "--check",
        metavar="THRESHOLDS",
        help="JSON/TOML file of metric → minimum (see evals/thresholds/ci.json); exit 1 and "
        "name every metric that misses its threshold",
    )
    p.add_argument("--judge-base-url", help="OpenAI-compatible judge endpoint (RAG_EVAL__JUDGE_BASE_URL)")
    p.add_argument("--judge-model", help="judge model name (RAG_EVAL__JUDGE_MODEL)")
    p.add_argument(
        "--max-false-refusal",
        type=float,
        default=0.02,
        metavar="RATE",
        help="false-refusal budget of the threshold recommendation (default 0.02)",
    )
    p.add_argument(
        "--support-check",
        action="store_true",
        help="only measure the support checker on evals/data/support_labels.jsonl: precision and "
        "recall of 'supported' and each disagreement; exit 1 below precision 0.95 or recall 0.6",
    )
    p.add_argument(
        "--relevance",
        action="store_true",
        help="only score answers against evals/data/relevance_labels.jsonl (papers and quotes judged by "
        "reading): the product, the product without constraint admission, and a known-bad answer "
        "(first sentences of the first retrieved papers), on the store of RAG_STORE__PATH, which must "
        "hold the labelled papers (e.g. the 2,115 of ../shared/data/iclr2025/papers.jsonl)",
    )
    p.add_argument(
        "--labels",
        type=Path,
        help="with --relevance: another file of judged questions in the same format (e.g. "
        "evals/data/relevance_fresh.jsonl, 24 questions judged blind at stop 32)",
    )
    p.add_argument(
        "--conversations",
        action="store_true",
        help="only score chat follow-ups against evals/data/conversations.jsonl (multi-turn conversations "
        "written by reading: references, metadata answers, narrowing, new questions), for the product and "
        "with follow-up reading off (known-bad), on the store of RAG_STORE__PATH, which must hold the "
        "papers of evals/data/conversation_seeds.jsonl (the 2,115 of ../shared/data/iclr2025/papers.jsonl)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.set_defaults(handler=run_eval)


def run_support_check(out: Any = None) -> int:
    """Print the checker's figures on the labelled set; 1 when they miss the targets."""
    out = out or sys.stdout  # now, not at import: a test may have replaced it since
    from .support_eval import evaluate_checker

    r = evaluate_checker()
    c = r["confusion"]
    print(
        f"support checker {r['checker']} on {r['pairs']} labelled pairs ({r['supported_labels']} supported): "
        f"precision {r['precision']:.3f}, recall {r['recall']:.3f}, accuracy {r['accuracy']:.3f} "
        f"(tp {c['tp']}, fp {c['fp']}, fn {c['fn']}, tn {c['tn']})",
        file=out,
    )
    for origin, counts in r["by_origin"].items():
        print(f"  {origin:<16} " + " ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=out)
    for e in r["errors"]:
        print(f"  [{e['label']} → checker {e['checker']}] {e['id']}: {e['sentence'][:120]}", file=out)
    ok = r["precision"] >= 0.95 and r["recall"] >= 0.6
    print("targets met (precision >= 0.95, recall >= 0.6)" if ok else "targets MISSED", file=out)
    return 0 if ok else 1


def run_relevance(settings: Settings, args: argparse.Namespace, out: Any = None) -> int:
    """Score the product's answers against the relevance labels; print and write the comparison."""
    out = out or sys.stdout  # now, not at import: a test may have replaced it since
    import json

    from rag import RAG

    from .relevance import load_labels, run, table

    questions = load_labels(args.labels) if getattr(args, "labels", None) else load_labels()
    if args.limit:
        questions = questions[: args.limit]
    probe = RAG(settings)
    papers = probe.retriever.papers()
    labelled = {pid for q in questions for pid in q.papers}
    missing = [pid for pid in labelled if pid not in papers]
    if missing:
        raise EvalError(
            f"the store at {settings.store.path} lacks {len(missing)} of the {len(labelled)} labelled papers "
            f"(e.g. {missing[0]}): ingest ../shared/data/iclr2025/papers.jsonl into it, or point "
            "RAG_STORE__PATH at a store that holds them"
        )

    def factory(overrides: dict[str, Any]) -> Any:
        if not overrides:
            return probe
        groups = {k: {**getattr(settings, k).model_dump(), **v} for k, v in overrides.items()}
        return RAG(settings.model_copy(update={k: type(getattr(settings, k))(**v) for k, v in groups.items()}))

    configs = [("product", {}), ("admission off", {"answer": {"admission": False}})]
    results, answers = run(factory, questions, configs, progress=not args.no_progress)
    print(f"relevance on {len(questions)} judged questions ({sum(len(q.papers) for q in questions)} papers)", file=out)
    print(table(results), file=out)
    dest = Path(args.out or "reports/relevance")
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "relevance.json").write_text(json.dumps(results, indent=2))
    shown = {
        name: {qid: {"text": a.text, "items": [it.paper_id for it in a.items], "refused": a.refused,
               "closest": [it.paper_id for it in a.closest]}
               for qid, a in got.items()}
        for name, got in answers.items()
    }
    (dest / "answers.json").write_text(json.dumps(shown, indent=2, ensure_ascii=False))
    print(f"report: {dest / 'relevance.json'}", file=out)
    return 0


def run_conversations(settings: Settings, args: argparse.Namespace, out: Any = None) -> int:
    """Score follow-ups against the written conversations; print and write the comparison."""
    out = out or sys.stdout  # now, not at import: a test may have replaced it since
    import json

    from rag import RAG

    from .conversations import load_conversations, load_seeds, run, table

    seeds = load_seeds()
    conversations = load_conversations(seeds=seeds)
    if args.limit:
        conversations = conversations[: args.limit]
    probe = RAG(settings)
    papers = probe.retriever.papers()
    needed = {pid for c in conversations for pid in seeds[c.sid].listed + seeds[c.sid].related}
    missing = [pid for pid in needed if pid not in papers]
    if missing:
        raise EvalError(
            f"the store at {settings.store.path} lacks {len(missing)} of the {len(needed)} papers the "
            f"conversations show (e.g. {missing[0]}): ingest ../shared/data/iclr2025/papers.jsonl into it"
        )

    def factory(overrides: dict[str, Any]) -> Any:
        if not overrides:
            return probe
        answer = settings.answer.model_copy(update=overrides)
        return RAG(settings.model_copy(update={"answer": answer}))

    configs = [("product", {}), ("known-bad: no follow-ups", {"followups": False})]
    results, details = run(factory, configs, conversations, seeds, progress=not args.no_progress)
    turns = results["product"]["follow_ups"]
    print(f"follow-ups of {len(conversations)} conversations ({turns} turns)", file=out)
    print(table(results), file=out)
    dest = Path(args.out or "reports/conversations")
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "conversations.json").write_text(json.dumps(results, indent=2))
    (dest / "turns.json").write_text(json.dumps(details, indent=2, ensure_ascii=False))
    print(f"report: {dest / 'conversations.json'}", file=out)
    return 0


def build_run_config(args: argparse.Namespace) -> RunConfig:
    """The run described by a preset and the flags that override it."""
    fields: dict[str, Any] = preset(args.preset) if args.preset else {}
    if args.corpus:
        fields["corpus"] = args.corpus
    if args.dataset:
        fields["datasets"] = args.dataset
    if args.retrievers:
        fields["retrievers"] = parse_retrievers(args.retrievers)
    if args.answers is not None:
        fields["answers"] = args.answers
    if args.answer_retrievers:
        fields["answer_retrievers"] = parse_retrievers(args.answer_retrievers)
        fields.setdefault("answers", True)
    for name in ("depth", "limit", "out", "store"):
        if getattr(args, name) is not None:
            fields[name] = getattr(args, name)
    if args.answer_limit is not None:
        fields["answer_limit"] = args.answer_limit or None
    if "corpus" not in fields or "datasets" not in fields:
        raise EvalError("give --preset, or --corpus and at least one --dataset")
    try:
        return RunConfig(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise EvalError(f"invalid eval option {'.'.join(map(str, first['loc']))}: {first['msg']}") from exc


def build_eval_settings(args: argparse.Namespace, settings: Settings) -> EvalSettings:
    """RAG_EVAL__* settings with the judge flags applied."""
    update = {
        k: v for k, v in (("judge_base_url", args.judge_base_url), ("judge_model", args.judge_model)) if v
    }
    return settings.eval.model_copy(update=update) if update else settings.eval


def run_eval(args: argparse.Namespace, settings: Settings) -> int:
    """Run the evaluation, write the report, check the thresholds; 0 on success, 1 when one is not met."""
    from .calibrate import calibrate
    from .ci_thresholds import check, load_thresholds
    from .report import write_report
    from .runner import Evaluation
    from .summary import summarize

    if args.support_check:
        return run_support_check()
    if args.relevance:
        return run_relevance(settings, args)
    if args.conversations:
        return run_conversations(settings, args)
    run = build_run_config(args)
    cfg = build_eval_settings(args, settings)
    rules = load_thresholds(args.check) if args.check else None  # a bad file fails before the run
    evaluation = Evaluation(run, settings, cfg)
    try:
        result = evaluation.run(progress=not args.no_progress)
    except KeyboardInterrupt:
        print(
            f"interrupted; finished questions are cached in {run.out}/cache — rerun the same command "
            "to resume",
            file=sys.stderr,
        )
        raise
    summary = summarize(result, cfg)
    cal = calibrate(result, settings.retrieval.refusal_threshold, args.max_false_refusal)
    paths = write_report(result, summary, cal, cfg)
    print_summary(summary, cal)
    print(f"\nreport: {paths['markdown']}  (JSON: {paths['json']})")
    if rules is None:
        return 0
    failures = check(summary["flat"], rules)
    if failures:
        print(
            f"\ngate FAILED: {len(failures)} metric(s) miss their threshold ({args.check})", file=sys.stderr
        )
        for f in failures:
            print(f"  FAIL {f.message()}", file=sys.stderr)
        return 1
    print(f"thresholds met: {len(rules)} threshold(s) in {args.check}")
    return 0


def print_summary(summary: dict[str, Any], cal: dict[str, Any] | None, out: Any = None) -> None:
    """A short plain-text digest of the headline figures."""
    out = out or sys.stdout  # now, not at import: a test may have replaced it since
    from .report import fmt
    from .summary import HEADLINE_ANSWER, HEADLINE_RETRIEVAL

    for ds, configs in summary["retrieval"].items():
        print(f"\n{ds} — retrieval", file=out)
        for cfg, s in configs.items():
            parts = [f"{m} {fmt(s['metrics'][m])}" for m in HEADLINE_RETRIEVAL if m in s["metrics"]]
            print(f"  {cfg:<8} " + "; ".join(parts), file=out)
    for ds, configs in summary["answers"].items():
        print(f"\n{ds} — answers", file=out)
        for cfg, s in configs.items():
            parts = [f"{m} {fmt(s['metrics'][m], 2)}" for m in HEADLINE_ANSWER if m in s["metrics"]]
            lat = s["latency_ms"]
            parts.append(f"first token p50/p95 {lat['ttft_ms']['p50']}/{lat['ttft_ms']['p95']} ms")
            parts.append(f"total p50/p95 {lat['total_ms']['p50']}/{lat['total_ms']['p95']} ms")
            print(f"  {cfg}: " + "; ".join(parts), file=out)
    if cal:
        rec = cal["recommended"]
        print(
            f"\ndense-similarity floor (one of several refusal signals, see docs/how-it-works.md): current "
            f"{cal['current']['threshold']:.2f} alone refuses "
            f"{cal['current']['refusal_unanswerable']:.0%} of unanswerable questions; recommended "
            f"{rec['threshold']:.2f} ({cal['rule']})",
            file=out,
        )
