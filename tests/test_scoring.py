"""The relevance model (rag/grounding/scoring.py): training, reading its file, and what it lists."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evals import train_relevance
from rag.errors import ConfigError
from rag.grounding.scoring import BUNDLED, FEATURES, RelevanceModel, fit, likeliest, relist


def _rows(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Candidates whose first feature says whether they are relevant, with noise in every feature."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(float)
    x = rng.normal(size=(n, len(FEATURES)))
    x[:, 0] += 3.0 * y
    return x, y


def test_fit_learns_the_feature_that_separates_relevant_papers() -> None:
    x, y = _rows(2000, 0)
    model = fit(x, y, threshold=0.5)
    assert np.argmax(np.abs(model.coef)) == 0 and model.coef[0] > 0
    xt, yt = _rows(1000, 1)
    accuracy = float(np.mean((model.probabilities(xt) >= 0.5) == (yt == 1)))
    assert accuracy > 0.9


def test_a_model_file_round_trips_and_a_wrong_one_is_a_clear_error(tmp_path: Path) -> None:
    model = fit(*_rows(500, 2), threshold=0.4, trained_on="test")
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model.to_json()))
    back = RelevanceModel.load(path)
    x, _ = _rows(20, 3)
    assert np.allclose(back.probabilities(x), model.probabilities(x)) and back.threshold == 0.4
    raw = model.to_json()
    raw["features"] = list(FEATURES[:-1])
    path.write_text(json.dumps(raw))
    with pytest.raises(ConfigError, match=r"m\.json.*other features"):
        RelevanceModel.load(path)
    path.write_text("{not json")
    with pytest.raises(ConfigError, match=r"cannot read the relevance model"):
        RelevanceModel.load(path)


def test_the_bundled_model_reads_and_weighs_every_feature() -> None:
    model = RelevanceModel.load(BUNDLED)
    assert model.coef.shape == (len(FEATURES),) and 0.0 < model.threshold < 1.0
    assert "writers' sets" in model.trained_on
    # its sentences' closeness to the question and the rules' own verdict both count for a paper
    weights = dict(zip(FEATURES, model.coef))
    assert weights["max_cos"] > 0 and weights["listed"] > 0


def _model(threshold: float = 0.5) -> RelevanceModel:
    """A model that reads only the first feature: its probability is 0.5 at 0."""
    coef = np.zeros(len(FEATURES))
    coef[0] = 1.0
    return RelevanceModel(np.zeros(len(FEATURES)), np.ones(len(FEATURES)), coef, 0.0, threshold)


def _features(first: dict[int, float]) -> dict[int, np.ndarray]:
    out = {}
    for n, v in first.items():
        row = np.zeros(len(FEATURES))
        row[0] = v
        out[n] = row
    return out


def test_relist_lists_the_likely_papers_most_likely_first_and_keeps_named_ones_first() -> None:
    feats = _features({1: 2.0, 2: -3.0, 3: 5.0, 4: 1.0, 5: -1.0})
    listed, chances = relist(_model(), feats, [1, 2])
    assert listed == [3, 1, 4]  # 2 was listed by the rules, is unlikely, and goes; 3 and 4 come in
    assert chances[3] > chances[1] > chances[4] > 0.5 > chances[2]
    listed, _ = relist(_model(), feats, [2, 1], keep=[2])
    assert listed == [2, 3, 1, 4]  # the paper the question names stays, first


def test_relist_adds_nothing_to_an_empty_list_and_keeps_the_rules_likeliest_when_few_are_likely() -> None:
    feats = _features({1: -2.0, 2: -3.0, 3: 4.0})
    assert relist(_model(), feats, []) == ([], {})  # a refusal stays a refusal
    feats = _features({1: -2.0, 2: -3.0, 4: -1.0, 5: -4.0, 6: 3.0})
    # one paper is likely; the rules' likeliest fill the list up to LEAST (three)
    assert relist(_model(), feats, [2, 1, 4, 5])[0] == [6, 4, 1]
    assert relist(_model(), feats, [2, 1])[0] == [6, 1]  # (never more of them than the rules list)


def test_a_field_the_rules_list_many_papers_of_keeps_the_rules_list_in_the_models_order_a_question_does_not() -> None:
    from rag.grounding.scoring import BROAD

    first = {n: float(-n) for n in range(1, BROAD + 1)}  # all unlikely, 1 the likeliest
    feats = _features({**first, 99: 5.0})
    listed = list(range(BROAD, 0, -1))
    assert relist(_model(), feats, listed, field=True)[0] == list(range(1, BROAD + 1))  # nothing added, nothing cut
    # a question the rules list as many papers for is relisted: the likely paper, then the least of theirs kept
    assert relist(_model(), feats, listed)[0] == [99, 1, 2]


def test_a_question_read_loosely_lists_the_likely_candidates_most_likely_first() -> None:
    feats = _features({1: -2.0, 2: 1.0, 3: 0.0, 4: 3.0})  # probabilities 0.12, 0.73, 0.5, 0.95
    assert likeliest(_model(), feats, 0.5) == [4, 2, 3]
    assert likeliest(_model(), feats, 0.99) == [] and likeliest(_model(), {}, 0.1) == []


def test_training_report_compares_rules_and_model_on_left_out_sets_and_can_fail(tmp_path: Path, capsys) -> None:
    """The check reads each set with a model trained on the others. Rules that list the wrong papers lose to
    a model that learned the signal; a model trained on shuffled labels loses to the same rules."""
    rng = np.random.default_rng(4)
    lines = []
    for s in range(4):
        for q in range(15):
            x, y = _rows(30, 100 * s + q)
            ids = [f"p{s}_{q}_{i}" for i in range(30)]
            relevant = [p for p, v in zip(ids, y) if v]
            wrong = [p for p, v in zip(ids, y) if not v][:3]
            lines.append({"set": f"s{s}", "qid": f"Q{q}", "relevant": relevant, "partly": [],
                          "listed": wrong + relevant[:1],
                          "features": {p: row.tolist() for p, row in zip(ids, x)}})
    lines.append({"set": "s0", "qid": "FP", "relevant": [], "partly": [], "listed": [],
                  "features": {"z": rng.normal(size=len(FEATURES)).tolist()}})
    path = tmp_path / "f.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    model_path = tmp_path / "model.json"
    totals = train_relevance.fit_and_check([path], threshold=0.5, ridge=1.0, model_path=model_path)
    rules, model = totals["rules"], totals["model"]
    assert model["on_list"] / model["listed"] > 0.8 > 0.3 > rules["on_list"] / rules["listed"]
    assert model["premises_listed"] == 0  # nothing is added to an empty list
    assert RelevanceModel.load(model_path).threshold == 0.5
    out = capsys.readouterr().out
    assert "rules" in out and "model" in out and "false premises with a list 0/1" in out
    # the same check, on labels shuffled within each question, shows the model no better than chance
    for r in lines:
        ids = list(r["features"])
        r["relevant"] = list(rng.choice(ids, size=len(r["relevant"]), replace=False)) if r["relevant"] else []
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    shuffled = train_relevance.fit_and_check([path], threshold=0.5, ridge=1.0, model_path=None)["model"]
    assert shuffled["on_list"] / max(shuffled["listed"], 1) < 0.5
