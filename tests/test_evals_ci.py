"""The CI quick evaluation: seed corpus, in-repo sets, real local model, checked against the shipped thresholds."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from rag.cli import main

REPO = Path(__file__).resolve().parent.parent
CI_THRESHOLDS = REPO / "evals" / "thresholds" / "ci.json"
BUDGET_S = 300


@pytest.mark.slow
def test_ci_quick_eval_passes_the_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "eval-ci"
    t0 = time.perf_counter()
    code = main(["eval", "--preset", "ci", "--out", str(out), "--check", str(CI_THRESHOLDS), "--no-progress"])
    elapsed = time.perf_counter() - t0
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:]
    assert "thresholds met" in captured.out
    assert elapsed < BUDGET_S, f"the CI evaluation took {elapsed:.0f}s (budget {BUDGET_S}s)"

    report = json.loads((out / "report.json").read_text())
    answers = report["answers"]
    assert set(answers) == {"seed_qa", "unanswerable"}
    seed = answers["seed_qa"]["answer-hybrid"]
    assert seed["n"] == 6  # the ci preset answers 6 of the 22 (evidence answers: no LLM call)
    for metric in ("false_refusal_rate", "citation_validity", "citation_coverage", "citation_support"):
        assert metric in seed["metrics"], metric
    assert seed["metrics"]["citation_validity"]["mean"] == 1.0  # the core drops markers naming no source
    assert seed["latency_ms"]["ttft_ms"]["p95"] is not None
    assert "refusal_rate" in answers["unanswerable"]["answer-hybrid"]["metrics"]
    assert "support checker" in report["meta"]["citation_support_method"]
    assert "precision" in report["meta"]["citation_support_method"]  # measured on the labelled set
    assert seed["metrics"]["citation_support"]["mean"] == 1.0  # quoted evidence only
    assert set(report["retrieval"]["seed_qa"]) == {"dense", "bm25", "hybrid"}
    for plot in ("retrieval", "answers", "latency", "calibration"):
        assert (out / "plots" / f"{plot}.png").is_file(), plot
    md = (out / "report.md").read_text()
    assert "support_labels.jsonl" in md and "## Refusal threshold calibration" in md

    # A second run resumes from the cache: nothing is recomputed, the figures are identical.
    assert main(["eval", "--preset", "ci", "--out", str(out), "--no-progress"]) == 0
    again = json.loads((out / "report.json").read_text())
    assert sum(s["computed"] for s in again["meta"]["stages"]) == 0
    assert again["answers"]["seed_qa"]["answer-hybrid"]["metrics"] == seed["metrics"]
