"""CI thresholds: thresholds files, failing and passing checks, and the `rag eval --check` exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.ci_thresholds import check, load_thresholds
from evals.errors import ThresholdError
from rag.cli import main

FLAT = {
    "seed_qa/dense/recall@5": 0.9,
    "seed_qa/hybrid/recall@5": 0.95,
    "seed_qa/answer-hybrid/false_refusal_rate": 0.1,
}


def _file(tmp_path: Path, data: object, name: str = "t.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data) if name.endswith(".json") else str(data))
    return path


def test_flat_file_means_minimums(tmp_path: Path):
    rules = load_thresholds(_file(tmp_path, {"_comment": "x", "seed_qa/dense/recall@5": 0.5}))
    assert [(r.pattern, r.bound, r.kind) for r in rules] == [("seed_qa/dense/recall@5", 0.5, "min")]
    assert check(FLAT, rules) == []


def test_impossible_threshold_fails_and_names_the_metric(tmp_path: Path):
    rules = load_thresholds(_file(tmp_path, {"min": {"seed_qa/*/recall@5": 1.01}}))
    failures = check(FLAT, rules)
    assert sorted(f.metric for f in failures) == ["seed_qa/dense/recall@5", "seed_qa/hybrid/recall@5"]
    assert failures[0].message() == "seed_qa/dense/recall@5 = 0.9 < minimum 1.01"


def test_maximum_bounds(tmp_path: Path):
    rules = load_thresholds(_file(tmp_path, {"max": {"seed_qa/answer-hybrid/false_refusal_rate": 0.05}}))
    [failure] = check(FLAT, rules)
    assert failure.message() == "seed_qa/answer-hybrid/false_refusal_rate = 0.1 > maximum 0.05"


def test_a_rule_matching_nothing_fails(tmp_path: Path):
    [failure] = check(FLAT, load_thresholds(_file(tmp_path, {"seed_qa/dense/recal@5": 0.1})))
    assert "no such metric" in failure.message()


def test_toml_thresholds(tmp_path: Path):
    toml = '[min]\n"seed_qa/dense/recall@5" = 0.0\n[max]\n"seed_qa/*/false_refusal_rate" = 1.0\n'
    rules = load_thresholds(_file(tmp_path, toml, "t.toml"))
    assert {r.kind for r in rules} == {"min", "max"} and check(FLAT, rules) == []


@pytest.mark.parametrize("content", ["{bad json", "[1, 2]", '{"m": "high"}', "{}"])
def test_bad_thresholds_files(tmp_path: Path, content: str):
    path = tmp_path / "t.json"
    path.write_text(content)
    with pytest.raises(ThresholdError):
        load_thresholds(path)


def test_shipped_ci_thresholds_parse():
    rules = load_thresholds(Path(__file__).resolve().parent.parent / "evals" / "thresholds" / "ci.json")
    assert rules and all(r.pattern.count("/") == 2 for r in rules)


@pytest.mark.slow
def test_cli_gate_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """A real retrieval run on the seed corpus: a trivial threshold is met, an impossible one fails."""
    trivial = _file(tmp_path, {"seed_qa/dense/recall@5": 0.0, "seed_qa/dense/ndcg@10": 0.0}, "trivial.json")
    impossible = _file(tmp_path, {"seed_qa/dense/recall@5": 1.5, "seed_qa/dense/mrr": 0.0}, "impossible.json")
    base = [
        "eval",
        "--preset",
        "ci",
        "--no-answers",
        "--dataset",
        "seed_qa",
        "--retrievers",
        "dense",
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
    ]
    assert main(base + ["--check", str(trivial)]) == 0
    assert "thresholds met" in capsys.readouterr().out
    assert main(base + ["--check", str(impossible)]) == 1
    err = capsys.readouterr().err
    assert "FAIL seed_qa/dense/recall@5 = 1 < minimum 1.5" in err
    assert "seed_qa/dense/mrr" not in err  # only the metrics that miss their threshold are named
    assert (tmp_path / "out" / "report.json").is_file()


def test_cli_reports_a_bad_thresholds_file_before_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    missing = tmp_path / "missing.json"
    assert main(["eval", "--preset", "ci", "--out", str(tmp_path / "out"), "--check", str(missing)]) == 1
    assert "thresholds file not found" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
