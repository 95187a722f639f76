"""The evaluation runner on the seed corpus: eval store placement, resume, answer scoring."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from evals.cache import ResultCache
from evals.config import EvalSettings, RunConfig
from evals.datasets import load_dataset
from evals.judge import SupportScorer, parse_verdict
from evals.runner import Evaluation, Stage, score_answer
from evals.summary import Stats, summarize, summarize_answers
from rag import RAG
from rag.ingest.corpus import seed_path
from rag.types import Answer, Citation, Source


def _config(out: Path) -> RunConfig:
    return RunConfig(
        corpus=seed_path(),
        datasets=["seed_qa", "unanswerable"],
        retrievers=["dense", "bm25"],
        depth=10,
        limit=10,
        out=out,
    )


def _quality(flat: dict[str, float]) -> dict[str, float]:
    """Figures that must not change on resume (latencies legitimately do)."""
    return {k: v for k, v in flat.items() if not k.endswith(("_p50", "_p95"))}


@pytest.mark.slow
def test_resumed_run_gives_the_same_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    cfg = EvalSettings()
    straight = Evaluation(_config(tmp_path / "a")).run(progress=False)
    total = sum(len(s.rows) for s in straight.stages)
    assert total == 10 + 10 + 10  # no BM25 pass over the set without gold papers
    expected = summarize(straight, cfg)

    calls = {"n": 0}
    real = RAG.retrieve

    def interrupted(self, *args, **kwargs):  # Ctrl-C in the middle of the second stage
        calls["n"] += 1
        if calls["n"] == 15:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(RAG, "retrieve", interrupted)
        with pytest.raises(KeyboardInterrupt):
            Evaluation(_config(tmp_path / "b")).run(progress=False)

    resumed = Evaluation(_config(tmp_path / "b")).run(progress=False)
    assert sum(s.computed for s in resumed.stages) == total - 14  # finished questions were not redone
    assert _quality(summarize(resumed, cfg)["flat"]) == _quality(expected["flat"])
    assert [r["retrieved"] for s in resumed.stages for r in s.rows] == [
        r["retrieved"] for s in straight.stages for r in s.rows
    ]
    again = Evaluation(_config(tmp_path / "b")).run(progress=False)
    assert sum(s.computed for s in again.stages) == 0


def test_eval_store_lives_in_the_output_dir(tmp_path: Path):
    Evaluation(
        RunConfig(
            corpus=seed_path(),
            datasets=["seed_qa"],
            retrievers=["dense"],
            depth=5,
            out=tmp_path / "out",
            limit=2,
        )
    ).run(progress=False)
    assert (tmp_path / "out" / "store").is_dir()
    assert not (tmp_path / "chroma").exists()  # the (test-local) default store was never opened


def test_runs_with_other_output_folders_share_one_eval_store(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    def run(out: str) -> None:
        Evaluation(RunConfig(corpus=seed_path(), datasets=["seed_qa"], retrievers=["dense"], depth=5,
                             out=tmp_path / out, limit=2, store=tmp_path / "shared")).run(progress=False)

    with caplog.at_level(logging.INFO, logger="evals.runner"):
        run("first")
        run("second")
    ingests = [r.getMessage() for r in caplog.records if r.getMessage().startswith("eval store:")]
    assert ingests == ["eval store: 19 added, 0 unchanged papers", "eval store: 0 added, 19 unchanged papers"]
    assert not (tmp_path / "first" / "store").exists() and not (tmp_path / "second" / "store").exists()


def test_a_changed_dataset_is_recomputed(tmp_path: Path):
    data = tmp_path / "mini.jsonl"
    data.write_text(
        json.dumps({"qid": "q1", "query": "protein language models", "gold_ids": ["UvPdpa4LuV"]}) + "\n"
    )
    run = RunConfig(
        corpus=seed_path(), datasets=[str(data)], retrievers=["dense"], depth=5, out=tmp_path / "o"
    )
    assert Evaluation(run).run(progress=False).stages[0].computed == 1
    assert Evaluation(run).run(progress=False).stages[0].computed == 0
    data.write_text(
        json.dumps({"qid": "q1", "query": "graph neural networks", "gold_ids": ["UqrFPhcmFp"]}) + "\n"
    )
    assert Evaluation(run).run(progress=False).stages[0].computed == 1


def test_cache_ignores_a_torn_line(tmp_path: Path):
    path = tmp_path / "c.jsonl"
    cache = ResultCache(path)
    cache.put({"key": "k1", "v": 1})
    with path.open("a") as fh:
        fh.write('{"key": "k2", "v"')  # killed mid-write
    reopened = ResultCache(path)
    assert reopened.get("k1") == {"key": "k1", "v": 1} and reopened.get("k2") is None
    reopened.put({"key": "k2", "v": 2})
    assert ResultCache(path).get("k2") == {"key": "k2", "v": 2}


def _source(n: int, pid: str, text: str) -> Source:
    return Source(number=n, paper_id=pid, title=f"T{n}", text=text, score=1.0 / n, dense_score=0.5)


def test_score_answer_by_hand(seed_rag):
    s1 = _source(
        1,
        "p1",
        "We propose a benchmark of code generation in forty programming languages. It has 16K samples.",
    )
    s2 = _source(2, "p2", "Protein language models predict fitness from sequence likelihood.")
    answer = Answer(
        question="q",
        text="We propose a benchmark of code generation in forty programming languages [1]. "
        "The weather in Paris is rainy in November [2]. This sentence has no citation at all.",
        raw_text="... [1] ... [2] ... [7]",
        citations=[
            Citation(
                number=1, paper_id="p1", title="T1", supporting_text="", score=1, support=1, kind="generated"
            ),
            Citation(
                number=2,
                paper_id="p2",
                title="T2",
                supporting_text="",
                score=1,
                support=0.1,
                kind="generated",
            ),
        ],
        sources=[s1, s2],
    )
    scorer = SupportScorer()
    row = score_answer(answer, ["p1"], scorer)
    assert row["citation_coverage"] == pytest.approx(2 / 3, abs=1e-4)
    assert row["raw_marker_validity"] == pytest.approx(2 / 3)  # [7] names no source
    assert row["citation_validity"] == 1.0
    assert [p["supported"] for p in row["support_pairs"]] == [True, False]
    assert [p["rule"] for p in row["support_pairs"]] == ["verbatim", "missing-name"]
    assert row["citation_support"] == 0.5
    assert row["gold_cited"] is True and row["gold_in_sources"] is True
    assert "support checker" in scorer.method


def test_refused_answer_has_no_citation_metrics():
    answer = Answer(
        question="q",
        text="I could not find it.",
        refused=True,
        llm_called=False,
        sources=[_source(1, "p1", "x")],
    )
    row = score_answer(answer, [], None)
    assert row["refused"] and "citation_coverage" not in row and row["gold_in_sources"] is None


def test_answer_summary_by_hand():
    def row(
        answerable: bool, refused: bool, llm: bool, coverage: float | None = None, ttft: float | None = None
    ):
        return {
            "answerable": answerable,
            "refused": refused,
            "llm_called": llm,
            "grounded": not refused,
            "citation_coverage": coverage,
            "completion_tokens": 10 if llm else None,
            "category": "c",
            "timings": {"first_token_ms": ttft, "total_ms": 100.0, "retrieval_ms": 5.0},
        }

    rows = [
        row(False, True, False),
        row(False, True, True, ttft=50.0),
        row(False, False, True, 1.0, ttft=70.0),
        row(True, False, True, 0.5, ttft=60.0),
        row(True, True, True, ttft=40.0),
    ]
    stage = Stage("answer", "answer-hybrid", "hybrid", load_dataset("seed_qa"), "fp", rows=rows)
    s = summarize_answers(stage, Stats(EvalSettings()))
    m = s["metrics"]
    assert m["refusal_rate"]["mean"] == pytest.approx(2 / 3, abs=1e-4)
    assert m["refusal_rate_before_llm"]["mean"] == pytest.approx(1 / 3, abs=1e-4)
    assert m["false_refusal_rate"]["mean"] == 0.5
    assert m["citation_coverage"]["mean"] == 0.75 and m["citation_coverage"]["n"] == 2
    assert m["tokens_per_answer"]["mean"] == 10
    assert s["latency_ms"]["ttft_ms"]["p50"] == 55.0  # median of 40, 50, 60, 70
    assert s["by_category"] == {"c": {"n": 3, "refused": 2, "refused_before_llm": 1}}


@pytest.mark.parametrize(
    "reply, verdict",
    [("YES", True), ("no.", False), ("Answer: Yes, it does", True), ("I cannot tell", None), ("", None)],
)
def test_parse_verdict(reply: str, verdict: bool | None):
    assert parse_verdict(reply) is verdict
