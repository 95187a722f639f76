"""Retrieval over real Chroma + BM25: modes, grouping by paper, decision filter inside the query."""

from __future__ import annotations

import pytest

from rag.errors import InvalidRequestError

GRAPH_Q = "Which paper learns graph invariance by removing spurious features?"
GRAPH_TITLE = "Learning Graph Invariance by Harnessing Spuriosity"


@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
def test_each_mode_finds_the_graph_paper(seed_rag, mode: str) -> None:
    r = seed_rag.retrieve(GRAPH_Q, top_k=5, retriever=mode)
    assert r.mode == mode
    assert r.sources[0].title == GRAPH_TITLE
    assert [s.number for s in r.sources] == list(range(1, len(r.sources) + 1))
    assert len({s.paper_id for s in r.sources}) == len(r.sources)  # one entry per paper
    assert r.best_dense is not None and r.best_dense > 0.5


def test_decision_filter_and_bad_options(seed_rag) -> None:
    # The 19 seed papers are all posters.
    for mode in ("dense", "bm25", "hybrid"):
        assert seed_rag.retrieve(GRAPH_Q, top_k=5, decisions=["Oral"], retriever=mode).sources == []
        posters = seed_rag.retrieve(GRAPH_Q, top_k=5, decisions=["Poster"], retriever=mode).sources
        assert posters[0].title == GRAPH_TITLE
    with pytest.raises(InvalidRequestError, match="unknown decision"):
        seed_rag.retrieve("x", decisions=["Workshop"])
    with pytest.raises(InvalidRequestError, match="unknown retriever"):
        seed_rag.retrieve("x", retriever="magic")  # type: ignore[arg-type]


@pytest.mark.slow
def test_filter_is_applied_inside_the_store_query(full_rag) -> None:
    # Post-filtering the global top-k would leave fewer than k Oral papers for most queries.
    q = "diffusion models for image generation"
    unfiltered = full_rag.retrieve(q, top_k=10, retriever="dense").sources
    assert sum(s.decision == "Oral" for s in unfiltered) < 10
    for mode in ("dense", "bm25", "hybrid"):
        filtered = full_rag.retrieve(q, top_k=10, decisions=["Oral"], retriever=mode).sources
        assert len(filtered) == 10 and {s.decision for s in filtered} == {"Oral"}
    both = full_rag.retrieve(q, top_k=10, decisions=["Oral", "Spotlight"], retriever="hybrid").sources
    assert len(both) == 10 and {s.decision for s in both} <= {"Oral", "Spotlight"}


def test_rerank_reply_parsing_is_tolerant() -> None:
    from rag.retrieval.rerank import parse_order

    assert parse_order("3, 1, 2", 3) == [3, 1, 2]
    assert parse_order("Ranking: [2] > [2] > [9] > [1]", 3) == [2, 1]  # repeats and out of range ignored
    assert parse_order("The most relevant paper is the second one.", 3) == []
    assert parse_order("1" * 5000, 3) == []  # a long run of digits is not a paper number
