"""Markers and sentences; generated sentences checked as they stream (real embedding model)."""

from __future__ import annotations

import pytest

from rag.grounding.verify import SentenceFilter
from rag.prompts import REFUSAL
from rag.text.citations import claims, is_refusal, marker_numbers, split_sentences, strip_markers
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
    from rag.models.embeddings import build_embedder
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


def _filter(embed, threshold: float = 0.8) -> SentenceFilter:
    return SentenceFilter(_sources(), embed, threshold)


def _run(flt: SentenceFilter, raw: str) -> str:
    shown = "".join(flt.feed(raw[i : i + 7]) for i in range(0, len(raw), 7))  # streamed in pieces
    return shown + flt.finish()


def test_supported_sentence_keeps_valid_marker_invalid_removed_and_reported(embed) -> None:
    flt = _filter(embed)
    shown = _run(flt, "A model first captures the spurious features and then removes them [1][7].")
    assert shown == "A model first captures the spurious features and then removes them [1]."
    assert flt.text() == shown
    assert flt.removed_markers == [7]
    [c] = flt.citations()
    assert (c.number, c.kind) == (1, "generated") and "spurious" in c.supporting_text


def test_sentence_its_source_does_not_state_is_never_shown_with_that_citation(embed) -> None:
    flt = _filter(embed)
    # Cited to the protein paper, but it is the graph paper's claim: moved to the source that states it.
    shown = _run(flt, "A model first captures the spurious features and then removes them [2].")
    assert shown.endswith("[1].") and [c.kind for c in flt.citations()] == ["attributed"]
    flt = _filter(embed)
    shown = _run(flt, "The method achieves 97% accuracy on ImageNet with GPT-4 [1]. Protein models estimate fitness zero-shot [2].")
    assert "ImageNet" not in shown and "97%" not in shown
    assert flt.unsupported == ["The method achieves 97% accuracy on ImageNet with GPT-4."]
    assert shown == "Protein language models estimate fitness zero-shot [2]." or shown == "Protein models estimate fitness zero-shot [2]."


def test_close_paraphrase_is_replaced_by_the_abstract_sentence(embed) -> None:
    flt = _filter(embed, threshold=0.7)
    shown = _run(flt, "The wild type sequence likelihood tells us when protein models work well [2].")
    assert shown == "We show that the likelihood of the wild type sequence predicts when such models succeed, and that finetuning helps low-likelihood proteins [2]."
    assert flt.replaced == 1 and len(flt.unsupported) == 1
    assert flt.citations()[0].kind == "evidence"


def test_unrelated_uncited_sentence_is_dropped_and_reported(embed) -> None:
    flt = _filter(embed)
    raw = "The weather in Paris is mild in the spring and tourists enjoy the cafes."
    assert _run(flt, raw) == ""
    assert flt.citations() == [] and flt.unsupported == [raw]


def test_title_line_cut_off_fragment_and_repeats_are_not_shown(embed) -> None:
    flt = _filter(embed)
    raw = (
        "Learning Graph Invariance by Harnessing Spuriosity [1]\n"
        "A model first captures the spurious features and then removes them [1]. "
        "A model first captures the spurious features and then removes them [1]. "
        "Protein language models estimate fitness zero"
    )
    shown = _run(flt, raw)
    assert shown == "A model first captures the spurious features and then removes them [1]."
    assert flt.unsupported == []


def test_refusal_detection() -> None:
    assert is_refusal(REFUSAL)
    assert is_refusal(f'"{REFUSAL}"')
    assert not is_refusal("Graph invariance is learned by removing spurious features [1].")


def test_claims_of_a_list_answer_carry_the_item_marker() -> None:
    text = "- **Graph Paper** [1]: First sentence here. Second one is here too.\n- **Protein** [2]: Third claim [3] made."
    assert claims(text) == [
        ("First sentence here.", [1]),
        ("Second one is here too.", [1]),
        ("Third claim made.", [2, 3]),
    ]


def test_a_refusal_names_the_paper_described_then_why() -> None:
    from rag.grounding.evidence import Assessment, Focus
    from rag.grounding.verify import PREMISE_NAMED, REFUSAL, refusal_text

    verdict = Assessment(False, "no retrieved paper mentions Stockfish", Focus(kind="single"),
                         premise="a chess model that beat Stockfish", described=True,
                         explain="None of the papers closest to the question mentions “Stockfish”.")
    assert refusal_text(verdict) == (
        f"{REFUSAL} {PREMISE_NAMED[1]} “a chess model that beat Stockfish”. "
        "None of the papers closest to the question mentions “Stockfish”.")
    verdict.explain = ""
    verdict.premise, verdict.described = "that grokking needs weight decay", False
    assert refusal_text(verdict) == f"{REFUSAL} {PREMISE_NAMED[0]} “that grokking needs weight decay”."


def test_a_list_request_with_papers_to_show_does_not_open_by_saying_no_abstract_states_it() -> None:
    # "No ICLR 2025 abstract here states all of “…”" above the papers closest to a list request: blind readers
    # took it for "nothing fits" and marked it false beside papers that fit (23 of 24 answers scored a point
    # higher without it, docs/relevance.md §5w)
    from rag.grounding.evidence import Assessment, Focus, Item
    from rag.grounding.verify import PREMISE_NAMED, REFUSAL, refusal_text

    shown = Item(number=1, sentences=["We propose CipherPrune."], score=0.5, coverage=0.5)
    verdict = Assessment(False, "no abstract sentence answers the question", Focus(kind="list"),
                         premise="keep a user's input hidden from the server", whole=True, closest=[shown])
    assert refusal_text(verdict) == ""  # the engine heads the search's first papers
    shown.missing = ["at inference time"]
    verdict.closest, verdict.related = [], [shown]
    assert refusal_text(verdict) == ("The papers closest to “keep a user's input hidden from the server”, each with "
                                     "what its abstract does not state:")
    # the search's first matches among them (no part named missing): none states all of it in these words
    verdict.related = [shown, Item(number=2, sentences=["We propose PIED."], score=0.5, coverage=0.5)]
    assert refusal_text(verdict) == ("The papers closest to “keep a user's input hidden from the server”, none stating "
                                     "all of it in these words:")
    verdict.related = []  # nothing shown: the refusal says so
    assert refusal_text(verdict) == f"{REFUSAL} {PREMISE_NAMED[0]} all of “keep a user's input hidden from the server”."
    # a claim no abstract states is still named first
    verdict.whole, verdict.related = False, [shown]
    assert refusal_text(verdict).startswith(f"{PREMISE_NAMED[0]} “keep a user's input hidden from the server”.")
