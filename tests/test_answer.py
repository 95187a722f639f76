"""Answers end to end: evidence (default with the bundled model) and generative (the real local
model where the test is about what it writes; a scripted LLM where it is about the plumbing: the
prompt, the sentence filter, the stream, the fallback to evidence, a failing model); every sentence
shown with a citation is stated by its source; refusal without an LLM call."""

from __future__ import annotations

import re

import pytest

from rag import RAG
from rag.errors import LLMUnavailableError
from rag.events import final_answer
from rag.grounding.support import check_source
from rag.prompts import REFUSAL, load
from rag.text.citations import claims
from rag.types import Answer

GRAPH_Q = "Which paper learns graph invariance by removing spurious features?"
GRAPH_TITLE = "Learning Graph Invariance by Harnessing Spuriosity"
# Scripted answers to GRAPH_Q: the first and third sentences are stated by the graph paper's abstract,
# the second is not.
SUPPORTED = (
    "LIRS takes an indirect approach by first learning the spurious features and then removing them "
    "from the ERM-learned features [1]."
)
UNSUPPORTED = "LIRS was trained on 4,096 TPUs for three months [1]."
GAIN = "It outperforms the second-best method by as much as 25.50% [1]."

QUESTIONS = [
    GRAPH_Q,
    "How can synthetic data help post-training of large language models?",
    "What explains when protein language models succeed at zero-shot fitness prediction?",
    "Which papers study spurious correlations in vision-language models?",
    "How do deep networks escape the curse of dimensionality?",
    "What is known about Gaussian universality in high-dimensional classification?",
    "Which paper evaluates code generation across many programming languages?",
    "How do strong preferences affect reward models and alignment?",
    "What methods combine induction and transduction for abstract reasoning?",
    "Is there work on message passing invariance for scalable GNNs?",
    "How can multimodal models avoid spurious features in zero-shot classification?",
    "Which ICLR 2025 papers analyse preference models theoretically?",
    "What benchmarks exist for multilingual code evaluation?",
    "How does compositionality relate to generalization in deep neural networks?",
    "Which paper proposes a reverse-bottleneck perspective?",
    "Tell me about out-of-distribution generalization on graphs.",
    "How are protein sequences scored by language model likelihood?",
    "What are the risks of synthetic data for LLMs?",
    "Summarize work on the ARC abstraction and reasoning benchmark.",
    "What do the papers say about symmetry learning?",
    "Explain invariant subgraph learning.",
    "Which papers discuss value alignment?",
    "How can we make GNN training scale to large graphs?",
    "What is mutual information used for in the synthetic data paper?",
    "Which methods improve robustness of CLIP-like models?",
    "Give an overview of theory papers in this corpus.",
    "What is program synthesis used for in reasoning tasks?",
    "Which paper finetunes protein models without supervision?",
    "How is the generalization gain of a post-trained model defined?",
    "Which works study the failure of Gaussian approximations?",
    "What evaluation covers 40 programming languages?",
    "Compare approaches to spurious correlation across graphs and images.",
]


def assert_citations_valid(answer: Answer) -> None:
    retrieved = {s.number: s.paper_id for s in answer.sources}
    cited = {c.number: c.paper_id for c in answer.citations}
    for number, pid in cited.items():
        assert retrieved.get(number) == pid, f"[{number}] cites a paper that was not retrieved"
    in_text = {int(n) for n in re.findall(r"\[(\d+)\]", answer.text)}
    assert in_text == set(cited), f"markers {in_text} vs citations {set(cited)}"
    if not answer.refused:
        assert answer.grounded == bool(answer.citations)


def assert_every_cited_sentence_supported(answer: Answer) -> None:
    """Every sentence with a marker passes the support checker against each source it cites."""
    by_number = {s.number: s for s in answer.sources}
    pairs = [(s, n) for s, nums in claims(answer.text) for n in nums]
    for sentence, n in pairs:
        src = by_number[n]
        v = check_source(sentence, src.title, src.text, src.authors)
        assert v.supported, f"[{n}] {src.title!r} does not state {sentence!r} ({v.rule}: {v.missing})"
    if not answer.refused:
        assert pairs, "an answer without any cited sentence"


@pytest.fixture(scope="module")
def gen_rag(seed_rag):
    """The seed store answered by the real local model in generative mode."""
    return RAG(seed_rag.settings.model_copy(update={"answer": seed_rag.settings.answer.model_copy(update={"mode": "generative"})}))


@pytest.mark.slow
def test_graph_question_is_answered_from_the_evidence(seed_rag) -> None:
    answer = seed_rag.ask(GRAPH_Q)
    assert not answer.refused and answer.mode == "evidence" and not answer.llm_called
    assert GRAPH_TITLE in [c.title for c in answer.citations], answer.model_dump_json(indent=1)
    assert answer.items and answer.items[0].title == GRAPH_TITLE
    assert_citations_valid(answer)
    assert_every_cited_sentence_supported(answer)
    for item in answer.items:  # quoted word for word from the abstract of the paper [n] names
        src = next(s for s in answer.sources if s.number == item.number)
        assert all(sent in src.text for sent in item.sentences)
    assert answer.timings.first_token_ms is not None and answer.timings.total_ms >= answer.timings.first_token_ms


def test_graph_question_generative_shows_only_supported_sentences(gen_rag) -> None:
    events = list(gen_rag.stream(GRAPH_Q))  # `ask` drains this same stream
    answer = final_answer(events)
    assert [e.type for e in events][0] == "sources" and events[-1].type == "answer"
    assert "".join(e.text for e in events if e.type == "token") == answer.text
    assert not answer.refused and answer.llm_called and answer.raw_text
    # What the 135M model writes varies with the prompt; what it may show does not.
    assert answer.sources[0].title == GRAPH_TITLE and answer.citations, answer.model_dump_json(indent=1)
    assert_citations_valid(answer)
    assert_every_cited_sentence_supported(answer)
    assert answer.removed_unsupported == len(answer.unsupported_sentences)


def test_off_topic_question_is_refused_without_calling_the_llm(seed_rag, fake_rag) -> None:
    answer = seed_rag.ask("What is the boiling point of water in Kelvin?")
    assert answer.refused and not answer.llm_called and answer.mode == "refusal" and answer.refusal_reason
    assert answer.text == REFUSAL and answer.citations == []
    # Proof that no LLM is involved: in generative mode, with an LLM that fails any call it gets, the
    # same question still refuses and the LLM received nothing.
    scripted = fake_rag([AssertionError("the LLM was called")])
    assert scripted.ask("What is the boiling point of water in Kelvin?").text == REFUSAL
    assert scripted.llm.calls == []


@pytest.mark.parametrize("mode", ["evidence", "generative"])
def test_stream_yields_sources_then_only_text_the_answer_shows(seed_rag, fake_rag, mode) -> None:
    rag = seed_rag if mode == "evidence" else fake_rag([f"{SUPPORTED} {UNSUPPORTED} {GAIN}"])
    events = list(rag.stream(GRAPH_Q))
    kinds = [e.type for e in events]
    assert kinds[0] == "sources" and kinds[-1] == "answer" and kinds.count("token") >= 1
    answer = events[-1].answer
    assert "".join(e.text for e in events if e.type == "token") == answer.text
    assert_citations_valid(answer)
    if mode == "generative":  # a checked sentence at a time; the unsupported one never streams
        assert [e.text for e in events if e.type == "token"] == [SUPPORTED, " " + GAIN]


def test_generative_prompt_holds_the_sources_and_unsupported_sentences_are_removed(fake_rag) -> None:
    raw = f"{SUPPORTED} {UNSUPPORTED} {GAIN.replace('[1]', '[7]')}"
    rag = fake_rag([raw])
    answer = rag.ask(GRAPH_Q)
    (call,) = rag.llm.calls
    assert call.method == "stream_chat"
    system, user = call.messages
    assert system.content == load("system")
    assert f"Question: {GRAPH_Q}" in user.content and REFUSAL in user.content
    # The LLM sees the papers that meet the question, under their numbers, and no other source.
    meeting = set(answer.matching_ids)
    assert meeting and GRAPH_TITLE in {s.title for s in answer.sources if s.paper_id in meeting}
    for s in answer.sources:
        assert (f"[{s.number}] {s.title}\n" in user.content) == (s.paper_id in meeting), s.title
    assert answer.mode == "generative" and answer.llm_called and not answer.refused
    assert answer.raw_text == raw and answer.completion_tokens == -(-len(raw) // 4)  # 4-character pieces
    assert answer.text == f"{SUPPORTED} {GAIN}"  # [7] names no source: the sentence is checked without it
    assert answer.unsupported_sentences == [UNSUPPORTED.removesuffix(" [1].") + "."]
    assert answer.removed_unsupported == 1 and answer.removed_markers == [7]
    assert [(c.number, c.title) for c in answer.citations] == [(1, GRAPH_TITLE)]
    assert_citations_valid(answer)
    assert_every_cited_sentence_supported(answer)


def test_nothing_supported_falls_back_to_the_evidence_answer(seed_rag, fake_rag) -> None:
    unsupported = [UNSUPPORTED, "The method needs 12 exaflops per graph [2]."]
    rag = fake_rag([" ".join(unsupported)])
    events = list(rag.stream(GRAPH_Q))
    answer = final_answer(events)
    assert answer.mode == "evidence" and answer.llm_called and answer.raw_text == " ".join(unsupported)
    assert answer.unsupported_sentences == [u.rsplit(" [", 1)[0] + "." for u in unsupported]
    assert answer.removed_unsupported == 2
    assert "TPUs" not in answer.text and "exaflops" not in answer.text
    assert answer.text == seed_rag.ask(GRAPH_Q).text  # the quoted evidence, as without an LLM
    assert "".join(e.text for e in events if e.type == "token") == answer.text
    assert_every_cited_sentence_supported(answer)


def test_the_local_model_is_stopped_when_its_first_sentences_fail_the_check(fake_rag) -> None:
    """The bundled model's first two sentences both unsupported: it is stopped there and the evidence
    answer shown (it rarely recovers, and every further token costs ~25 ms); an endpoint's model
    writes on, and its later supported sentences are shown."""
    from rag.answer.engine import LOCAL_GIVE_UP

    raw = f"{UNSUPPORTED} The method needs 12 exaflops per graph [2]. {SUPPORTED} {GAIN}"
    local = fake_rag([raw]).ask(GRAPH_Q)
    assert LOCAL_GIVE_UP == 2 and local.mode == "evidence" and local.removed_unsupported == 2
    assert local.raw_text.startswith(UNSUPPORTED) and GAIN not in local.raw_text  # stopped early
    assert len(local.raw_text) < len(raw)
    assert_every_cited_sentence_supported(local)

    remote = fake_rag([raw], llm={"base_url": "http://127.0.0.1:9/v1", "model": "m"}).ask(GRAPH_Q)
    assert remote.mode == "generative" and remote.raw_text == raw
    assert remote.text == f"{SUPPORTED} {GAIN}" and remote.removed_unsupported == 2
    assert_every_cited_sentence_supported(remote)


def test_a_refusal_from_the_model_is_not_shown_as_an_answer(seed_rag, fake_rag) -> None:
    rag = fake_rag([REFUSAL])
    answer = rag.ask(GRAPH_Q)
    assert answer.llm_called and answer.raw_text == REFUSAL and REFUSAL not in answer.text
    assert answer.mode == "evidence" and answer.text == seed_rag.ask(GRAPH_Q).text


def test_llm_failing_mid_answer_raises_llm_unavailable_after_the_shown_text(fake_rag) -> None:
    from .fakes import Broken

    rag = fake_rag([Broken(f"{SUPPORTED} LIRS", ConnectionError("connection reset"))])
    events = []
    with pytest.raises(LLMUnavailableError, match=r"the local model is unavailable \(ConnectionError: connection reset\)"):
        for event in rag.stream(GRAPH_Q):
            events.append(event)
    assert [e.type for e in events] == ["sources", "token"] and events[1].text == SUPPORTED
    with pytest.raises(LLMUnavailableError, match="TimeoutError: read timed out"):
        fake_rag([TimeoutError("read timed out")]).ask(GRAPH_Q)


@pytest.mark.slow
def test_generated_answers_show_only_supported_sentences(seed_rag, gen_rag) -> None:
    # Every fourth question with the real model (short answers keep it to seconds); all 32 in
    # evidence mode, which needs no LLM.
    rag = RAG(gen_rag.settings.model_copy(update={"llm": gen_rag.settings.llm.model_copy(update={"max_tokens": 64})}))
    answers = [rag.ask(q, top_k=3) for q in QUESTIONS[::4]] + [seed_rag.ask(q, top_k=3) for q in QUESTIONS]
    assert len(answers) >= 40
    for a in answers:
        assert_citations_valid(a)
        assert_every_cited_sentence_supported(a)
    answered = [a for a in answers if not a.refused]
    assert len(answered) >= 30
    assert all(a.grounded for a in answered)


def test_llama_index_query_engine_entry_point(seed_rag) -> None:
    from llama_index.core.base.response.schema import Response

    response = seed_rag.engine.query("Which paper learns graph invariance by removing spurious features?")
    assert isinstance(response, Response)
    answer = response.metadata["answer"]
    assert response.response == answer.text
    assert [n.node.node_id for n in response.source_nodes] == [s.paper_id for s in answer.sources]
    assert_citations_valid(answer)
