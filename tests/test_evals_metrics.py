"""Each evaluation metric against cases computed by hand."""

from __future__ import annotations

import math

import pytest
from llama_index.core.evaluation.retrieval.metrics import NDCG

from evals.metrics import (
    bootstrap_ci,
    citation_coverage,
    cited_paper_validity,
    hit_at_k,
    marker_validity,
    mean,
    ndcg_at_k,
    paper_ranking,
    percentile,
    recall_at_k,
    reciprocal_rank,
    retrieval_scores,
)


def test_chunks_of_one_paper_count_once():
    assert paper_ranking(["a", "a", "b", "a", "g"]) == ["a", "b", "g"]
    # "g" is the third paper even though it is the fifth chunk
    assert reciprocal_rank(["a", "a", "b", "a", "g"], ["g"]) == pytest.approx(1 / 3)
    assert hit_at_k(["a", "a", "a", "g"], ["g"], 2) == 1.0


def test_hit_at_k():
    retrieved = ["a", "b", "c", "d"]
    assert hit_at_k(retrieved, ["c"], 1) == 0.0
    assert hit_at_k(retrieved, ["c"], 2) == 0.0
    assert hit_at_k(retrieved, ["c"], 3) == 1.0
    assert hit_at_k(retrieved, ["z"], 4) == 0.0
    assert hit_at_k([], ["c"], 4) == 0.0


def test_recall_at_k():
    retrieved = ["a", "g1", "b", "g2", "c"]
    gold = ["g1", "g2", "g3"]
    assert recall_at_k(retrieved, gold, 1) == 0.0
    assert recall_at_k(retrieved, gold, 2) == pytest.approx(1 / 3)
    assert recall_at_k(retrieved, gold, 4) == pytest.approx(2 / 3)
    assert recall_at_k(retrieved, gold, 100) == pytest.approx(2 / 3)


def test_reciprocal_rank():
    assert reciprocal_rank(["a", "b", "g"], ["g"]) == pytest.approx(1 / 3)
    assert reciprocal_rank(["g", "b", "g2"], ["g", "g2"]) == 1.0  # first gold counts
    assert reciprocal_rank(["a", "b"], ["g"]) == 0.0
    assert reciprocal_rank(["a", "b", "g"], ["g"], k=2) == 0.0


def test_ndcg_by_hand():
    # gold at ranks 1 and 3 of two gold papers: (1 + 1/log2 4) / (1 + 1/log2 3)
    expected = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["g1", "x", "g2"], ["g1", "g2"], 10) == pytest.approx(expected)
    assert ndcg_at_k(["x", "g"], ["g"], 10) == pytest.approx(1 / math.log2(3))
    assert ndcg_at_k(["x", "y", "z", "g"], ["g"], 3) == 0.0
    assert ndcg_at_k(["g"], [], 10) == 0.0


def test_ndcg_ideal_is_cut_at_k():
    # 12 gold papers, the first 10 retrieved are all gold: a perfect top 10.
    gold = [f"g{i}" for i in range(12)]
    assert ndcg_at_k(gold[:10], gold, 10) == pytest.approx(1.0)
    # llama-index divides by the ideal DCG of all 12, which is why evals keeps its own nDCG@k
    llama = NDCG().compute(expected_ids=gold, retrieved_ids=gold[:10]).score
    assert llama < 0.95


def test_ndcg_agrees_with_llama_index_when_gold_fits_in_k():
    retrieved = ["a", "g2", "b", "c", "g1", "d"]
    gold = ["g1", "g2", "g3"]
    ours = ndcg_at_k(retrieved, gold, 10)
    theirs = NDCG().compute(expected_ids=gold, retrieved_ids=retrieved).score
    assert ours == pytest.approx(theirs)


def test_retrieval_scores_keys():
    s = retrieval_scores(["g", "a"], ["g"], [1, 5])
    assert s == {"hit@1": 1.0, "recall@1": 1.0, "hit@5": 1.0, "recall@5": 1.0, "mrr": 1.0, "ndcg@10": 1.0}


def test_citation_coverage_counts_claim_sentences():
    text = "Alpha beta gamma delta [1]. Epsilon zeta eta theta. Iota kappa lambda mu [2][3]."
    assert citation_coverage(text) == pytest.approx(2 / 3)
    # a sentence under four words is not a claim; one with a marker always is
    assert citation_coverage("Yes. Alpha beta gamma delta [1].") == 1.0
    assert citation_coverage("Alpha beta gamma delta.\nEpsilon zeta eta theta [2].") == 0.5
    assert citation_coverage("") is None


def test_marker_validity():
    raw = "Alpha beta gamma delta [1]. Epsilon zeta eta theta [3]. Iota kappa lambda mu [1, 2]."
    # markers 1, 3, 1, 2 against sources 1 and 2: three of four are valid
    assert marker_validity(raw, [1, 2]) == pytest.approx(3 / 4)
    assert marker_validity("No markers in this sentence at all.", [1]) is None


def test_cited_paper_validity():
    assert cited_paper_validity(["p1", "p2"], ["p1", "p2", "p3"]) == 1.0
    assert cited_paper_validity(["p1", "p9"], ["p1", "p2"]) == 0.5
    assert cited_paper_validity([], ["p1"]) is None


def test_mean_and_percentiles_skip_missing_values():
    assert mean([1.0, None, 0.0, float("nan")]) == 0.5
    assert mean([None]) is None
    vals = [10.0, 20.0, 30.0, 40.0]
    assert percentile(vals, 50) == pytest.approx(25.0)
    assert percentile(vals, 95) == pytest.approx(38.5)  # 10 + 0.95 * 3 * 10
    assert percentile([], 50) is None


def test_bootstrap_ci():
    assert bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0)
    assert bootstrap_ci([]) is None
    vals = [0.0, 1.0] * 50
    lo, hi = bootstrap_ci(vals, seed=0)
    assert lo < 0.5 < hi
    # the normal approximation of a proportion: 0.5 ± 1.96 * sqrt(0.25 / 100) = ±0.098
    assert hi - lo == pytest.approx(0.196, abs=0.03)
    assert bootstrap_ci(vals, seed=0) == (lo, hi)  # deterministic
    wide = bootstrap_ci([0.0, 1.0] * 5, seed=0)
    assert wide[1] - wide[0] > hi - lo


def test_report_plots_are_written_for_the_sections_a_report_has(tmp_path) -> None:
    from evals.plots import HEADLINE_ANSWER, HEADLINE_RETRIEVAL, write_plots

    stat = {"mean": 0.8, "ci": [0.7, 0.9]}
    report = {
        "retrieval": {"seed_qa": {"dense": {"metrics": {HEADLINE_RETRIEVAL[0]: stat}}}},
        "answers": {"seed_qa": {"answer-hybrid": {"metrics": {HEADLINE_ANSWER[0]: stat},
                                                  "latency_samples": {"ttft_ms": [10.0, 20.0], "total_ms": [30.0, 45.0]}}}},
    }
    made = write_plots(report, tmp_path / "plots")
    assert set(made) == {"retrieval", "answers", "latency"}  # no calibration section, no calibration plot
    assert all(p.is_file() and p.read_bytes()[:4] == b"\x89PNG" for p in made.values())
