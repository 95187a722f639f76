"""The judge path: configuration, a dead endpoint, and the real local model standing in as judge."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from evals.config import EvalSettings, RunConfig
from evals.errors import EvalError
from evals.judge import AnswerJudge, SupportScorer, build_judge, render_prompt
from evals.report import write_report
from evals.runner import Evaluation
from evals.summary import summarize
from rag import Settings
from rag.ingest.corpus import seed_path
from rag.models.llm import build_llm
from rag.settings import LLMSettings

CLAIM = "McEval is a code benchmark that covers 40 programming languages."
ABSTRACT = (
    "We propose a massively multilingual code benchmark covering 40 programming languages (McEval) "
    "with 16K test samples. The benchmark contains code completion, understanding and generation tasks."
)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_no_judge_without_an_endpoint():
    assert build_judge(EvalSettings()) is None


def test_judge_needs_a_model_name():
    with pytest.raises(EvalError, match="RAG_EVAL__JUDGE_MODEL"):
        build_judge(EvalSettings(judge_base_url="http://127.0.0.1:1/v1"))


def test_judge_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("RAG_EVAL__JUDGE_BASE_URL", "http://127.0.0.1:8080/v1")
    monkeypatch.setenv("RAG_EVAL__JUDGE_MODEL", "judge-model")
    judge = build_judge(Settings().eval)
    assert judge is not None and judge.model == "judge-model" and judge.api_base == "http://127.0.0.1:8080/v1"


def test_an_old_eval_spelling_is_an_error_naming_the_new_one(monkeypatch: pytest.MonkeyPatch):
    from rag.errors import ConfigError

    monkeypatch.setenv("RAG_EVAL_SEED", "7")
    with pytest.raises(ConfigError, match="RAG_EVAL_SEED is no longer read; set RAG_EVAL__SEED instead"):
        Settings()
    monkeypatch.delenv("RAG_EVAL_SEED")
    monkeypatch.setenv("RAG_EVAL__SEED", "7")
    assert Settings().eval.seed == 7


def test_prompt_variables_are_checked():
    assert CLAIM in render_prompt("citation_support", passage=ABSTRACT, claim=CLAIM)
    with pytest.raises(EvalError, match="expects"):
        render_prompt("citation_support", passage=ABSTRACT)


def test_a_dead_judge_endpoint_is_one_clear_error(seed_rag):
    cfg = EvalSettings(
        judge_base_url=f"http://127.0.0.1:{_closed_port()}/v1", judge_model="m", judge_timeout=2
    )
    judge = build_judge(cfg)
    judge.max_retries = 0
    scorer = SupportScorer(judge=judge)
    assert scorer.method == "LLM judge (m)"
    with pytest.raises(EvalError, match="judge endpoint is unavailable"):
        scorer.score([(CLAIM, _src())])


@pytest.mark.slow
def test_local_model_as_judge(seed_rag):
    """The judge code path end to end, with the bundled model standing in for a real judge."""
    judge = seed_rag.llm
    scorer = SupportScorer(judge=judge)
    [res] = scorer.score([(CLAIM, _src())])
    assert res["supported"] in (True, False, None) and res["coverage"] > 0.5
    scores = AnswerJudge(judge).evaluate("Which benchmark covers 40 languages?", CLAIM, [ABSTRACT])
    assert set(scores) == {"faithfulness", "relevancy"}
    assert all(v in (0.0, 1.0, None) for v in scores.values())


@pytest.mark.slow
def test_judged_run_labels_the_report(tmp_path: Path):
    # Short answers from two sources, and a terse judge, keep this to a few local generations.
    settings = Settings(retrieval={"top_k": 2}, llm={"max_tokens": 48})
    judge = build_llm(LLMSettings(max_tokens=16))
    run = RunConfig(
        corpus=seed_path(),
        datasets=["seed_qa"],
        retrievers=["dense"],
        depth=5,
        answers=True,
        answer_retrievers=["dense"],
        limit=1,
        out=tmp_path / "out",
    )
    result = Evaluation(run, settings, judge=judge).run(progress=False)
    assert result.support_method.startswith("LLM judge") and not result.support_is_proxy
    rows = result.stages[-1].rows
    assert all("faithfulness" in r and "relevancy" in r for r in rows if not r["refused"])
    summary = summarize(result, EvalSettings())
    assert "seed_qa" in summary["answers"]
    md = write_report(result, summary, None, EvalSettings())["markdown"].read_text()
    assert "Citation support method: **LLM judge" in md and "support checker" not in md


def _src():
    from rag.types import Source

    return Source(number=1, paper_id="p", title="McEval", text=ABSTRACT, score=1.0)
