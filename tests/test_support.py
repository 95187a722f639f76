"""The support checker against the hand-labelled set, and on answers known to be wrong."""

from __future__ import annotations

import json

import pytest

from evals.support_eval import LABELS, evaluate_checker
from rag.grounding.support import check_source


@pytest.fixture(scope="module")
def corpus(full_corpus):
    return {p["id"]: p for p in map(json.loads, full_corpus.read_text(encoding="utf-8").splitlines())}


def test_labelled_set_is_large_and_mixed() -> None:
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 150
    origins = {r["origin"] for r in rows}
    assert {"model", "verbatim", "trimmed", "other-abstract", "swapped-entity", "swapped-number", "invented-author"} <= origins
    assert sum(r["origin"] == "model" for r in rows) >= 60  # real local-model sentences
    assert all(r["reason"].strip() and r["label"] in ("supported", "unsupported") for r in rows)


def test_checker_precision_and_recall_on_the_labelled_set(full_corpus) -> None:
    r = evaluate_checker()
    assert r["pairs"] >= 150
    assert r["precision"] >= 0.95, r["errors"]
    assert r["recall"] >= 0.6, r["errors"]
    # Every kind of constructed unsupported sentence is caught almost always.
    for origin in ("other-abstract", "wrong-title", "overclaim", "topic-only"):
        assert r["by_origin"][origin].get("fp", 0) == 0, origin


def test_known_wrong_answers_fail_and_a_quote_passes(corpus) -> None:
    """The metric can fail: the examples from the issue are rejected, the abstract itself passes."""
    camex = next(p for p in corpus.values() if p["title"].startswith("CAMEx"))
    data_env = corpus["00SnKBGTsz"]

    def check(sentence: str, paper: dict) -> bool:
        return check_source(sentence, paper["title"], paper["abstract"], paper["authors"] or []).supported

    assert not check("ICLR: In-Context Learning of Representations", camex)
    assert not check("The ICLR 2025 paper proves that P equals NP.", camex)
    assert not check(
        "Transformers Struggle to Learn to Search: A New Approach to Graph Learning by Ian Karpowitz and Jens Krug-Hdanak.",
        data_env,
    )
    assert not check("DataEnvGym improves student accuracy by 40% on MMLU.", data_env)
    assert not check("The agent's end goal is not to improve student model performance.", data_env)
    first = data_env["abstract"].split(". ")[0] + "."
    assert check(first, data_env)
    assert check("DataEnvGym frames data generation as a sequential decision-making task.", data_env)
    assert check("This paper introduces DataEnvGym, a testbed of teacher environments for data generation agents.", data_env)


def test_a_sentence_about_the_answer_itself_is_not_a_claim() -> None:
    """The local model's "The answer to this question is [2]:" passed before: the abstract says "To
    answer this question", so it held every word. Words about the answer are no claim."""
    abstract = "To answer this question, we study preference models. Strong preferences make them brittle."
    for sentence in ("The answer to this question is [2]:", "The following papers answer the question.",
                     "This paper provides the answer [1]."):
        v = check_source(sentence, "Strong Preferences Affect Preference Models", abstract)
        assert not v.supported and v.rule == "not-a-claim", (sentence, v)
    assert check_source("This paper studies preference models [1].", "Strong Preferences", abstract).supported


def test_title_only_line_is_not_a_claim(corpus) -> None:
    p = corpus["00SnKBGTsz"]
    v = check_source(p["title"], p["title"], p["abstract"], p["authors"])
    assert not v.supported and v.rule == "title-only"
