"""Citation checking with the real embedding model: markers, removal, post-hoc attribution."""

from __future__ import annotations

import pytest

from rag.citations import check_citations, is_refusal, marker_numbers, split_sentences, strip_markers
from rag.prompts import REFUSAL
from rag.types import Source

GRAPH = (
    "Graph neural networks often rely on spurious subgraphs. We propose learning graph invariance by "
    "harnessing spuriosity: a model first captures the spurious features and then removes them, so "
    "the remaining invariant subgraph generalizes out of distribution."
)
PROTEIN = (
    "Protein language models estimate fitness zero-shot. We show that the likelihood of the wild type "
    "sequence predicts when such models succeed, and that finetuning helps low-likelihood proteins."
)


@pytest.fixture(scope="module")
def embed():
    from rag.embeddings import build_embedder
    from rag.settings import EmbeddingSettings

    return build_embedder(EmbeddingSettings()).get_text_embedding_batch


def _sources() -> list[Source]:
    return [
        Source(number=1, paper_id="g", title="Learning Graph Invariance by Harnessing Spuriosity", text=GRAPH, score=1.0),
        Source(number=2, paper_id="p", title="Protein Language Model Fitness", text=PROTEIN, score=0.5),
    ]


def test_marker_forms() -> None:
    assert marker_numbers("A claim [1].") == [1]
    assert marker_numbers("A claim [1, 2] and [2][3].") == [1, 2, 3]
    assert marker_numbers("See [Source 4] and [2-3].") == [4, 2, 3]
    assert strip_markers("A claim [1][2].") == "A claim."


def test_sentence_split_keeps_markers_and_abbreviations() -> None:
    text = "Models e.g. GNNs fail [1]. Others work. [2] Finally this."
    assert split_sentences(text) == ["Models e.g. GNNs fail [1].", "Others work. [2]", "Finally this."]


def test_valid_marker_kept_invalid_removed_and_reported(embed) -> None:
    raw = "The method removes spurious features to learn graph invariance [1][7]."
    checked = check_citations(raw, _sources(), embed, 0.45)
    assert checked.text == "The method removes spurious features to learn graph invariance [1]."
    assert checked.removed_markers == [7]
    assert [c.number for c in checked.citations] == [1]
    assert checked.citations[0].kind == "generated"
    assert "spurious" in checked.citations[0].supporting_text


def test_uncited_sentence_is_attributed_to_the_supporting_source(embed) -> None:
    raw = "The likelihood of the wild type protein sequence predicts zero-shot fitness of protein language models."
    checked = check_citations(raw, _sources(), embed, 0.45)
    assert [(c.number, c.kind) for c in checked.citations] == [(2, "attributed")]
    assert checked.text.endswith("models [2].")
    assert checked.citations[0].support >= 0.45


def test_unrelated_sentence_stays_uncited_and_is_reported(embed) -> None:
    raw = "The weather in Paris is mild in the spring and tourists enjoy the cafes."
    checked = check_citations(raw, _sources(), embed, 0.45)
    assert checked.citations == []
    assert checked.unsupported == [raw]


def test_refusal_detection() -> None:
    assert is_refusal(REFUSAL)
    assert is_refusal(f'"{REFUSAL}"')
    assert not is_refusal("Graph invariance is learned by removing spurious features [1].")
