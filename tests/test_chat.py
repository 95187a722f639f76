"""Conversation condensing, the generation queue and the live marker filter (rag/chat/conversation.py, rag/queue.py, rag/text/citations.py)."""

from __future__ import annotations

import threading
import time

import pytest

from rag import prompts
from rag.chat.conversation import (
    CONDENSE_MAX_TOKENS,
    ChatTurn,
    chat,
    chat_stream,
    clean_llm_question,
    condense,
    depends_on_history,
    fallback_question,
    format_history,
    pointed_titles,
    reference_line,
    reference_titles,
    resolve_pointers,
    usable,
)
from rag.errors import BusyError, LLMUnavailableError
from rag.events import Condensed, Final, Sources, Token, final_answer
from rag.queue import GenerationQueue
from rag.text.citations import LiveMarkerFilter, marker_numbers, strip_markers
from rag.types import Citation

from .fakes import ScriptedLLM

LEAN = "LeanAgent: Lifelong Learning for Formal Theorem Proving"
MRAG = "MRAG-Bench: Vision-Centric Evaluation for Retrieval-Augmented Multimodal Models"
Q1 = "Which paper proposes a lifelong learning agent for formal theorem proving?"
FOLLOW_UP = "What benchmark does it use?"


def _citation(n: int, title: str) -> Citation:
    return Citation(
        number=n, paper_id=f"p{n}", title=title, supporting_text="", score=0.5, support=0.5, kind="generated"
    )


def _history(
    text: str = "LeanAgent learns theorems continuously [1]. MRAG-Bench is a benchmark [2].",
    with_citations: bool = True,
) -> list[ChatTurn]:
    cites = [_citation(1, LEAN), _citation(2, MRAG)] if with_citations else []
    return [ChatTurn(role="user", content=Q1), ChatTurn(role="assistant", content=text, citations=cites)]


def test_condense_prompt_variables_match_the_code() -> None:
    assert prompts.variables("condense") == {"history", "question"}


def test_reference_titles_from_citations_or_reference_list() -> None:
    assert reference_titles(_history()[1]) == {1: LEAN, 2: MRAG}
    text = f"LeanAgent does X [1].\n\n**References**\n\n[1] {LEAN} — https://openreview.net/forum?id=a\n[2] {MRAG} (attributed) — https://x.org/b"
    turn = ChatTurn(role="assistant", content=text)
    assert reference_titles(turn) == {1: LEAN, 2: MRAG}
    assert reference_line("[3] A Title - http://x") == (3, "A Title")
    assert reference_line("[3] A - B: Title") == (3, "A - B: Title")
    assert reference_line("[3]") is None and reference_line("no [1] reference") is None


def test_hostile_history_lines_parse_in_linear_time() -> None:
    """Issue 10: one 20,000-character history line took 27 s of CPU in a backtracking regex, and a
    5,000-digit marker raised (a 500). Both are now ordinary text, parsed in one pass."""
    hostile = [
        "[1] x" + " " * 19990 + "x",
        "[1] " + "a " * 9000 + "(attributed)" + " —" * 500,
        "see [" + "9" * 5000 + "] and [1]",
        "[" + "1, " * 6000 + "2]",
    ]
    start = time.process_time()
    for line in hostile:
        turn = ChatTurn(role="assistant", content=line)
        reference_titles(turn)
        marker_numbers(line)
        strip_markers(line)
    # Linear work is milliseconds; the old patterns needed tens of seconds for the first line alone.
    assert time.process_time() - start < 1.0
    assert reference_titles(ChatTurn(role="assistant", content=hostile[0])) == {1: "x x"}
    assert marker_numbers(hostile[2]) == [1]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What benchmark does the second one use?", [MRAG]),
        ("Tell me more about paper 1", [LEAN]),
        ("And [2]?", [MRAG]),
        ("What about the last paper?", [MRAG]),
        ("What benchmark does it use?", []),
    ],
)
def test_pointed_titles(question: str, expected: list[str]) -> None:
    assert pointed_titles(question, _history()) == expected


def test_ordinals_follow_the_order_of_citation_in_the_text() -> None:
    hist = _history("MRAG-Bench is a benchmark [2]. LeanAgent proves theorems [1].")
    assert pointed_titles("the first one?", hist) == [MRAG]


def test_fallback_resolves_pointers_and_it_or_adds_context() -> None:
    assert fallback_question(FOLLOW_UP, _history()) == f'What benchmark does "{LEAN}" use?'
    assert fallback_question("Who are its authors?", _history()) == f'Who are "{LEAN}"\'s authors?'
    assert fallback_question("What benchmark does the second one use?", _history()) == (
        f'What benchmark does "{MRAG}" use?'
    )
    assert resolve_pointers("Compare paper 1 with [2].", _history()) == f'Compare "{LEAN}" with "{MRAG}".'
    plural = fallback_question("What do they have in common?", _history())
    assert plural.startswith("What do they have in common? (context: ") and Q1 in plural and MRAG in plural
    refused = [ChatTurn(role="user", content=Q1), ChatTurn(role="assistant", content=prompts.REFUSAL)]
    assert fallback_question(FOLLOW_UP, refused) == f"{FOLLOW_UP} (context: {Q1})"
    standalone = "Which papers study protein language model fitness and preference?"
    assert not depends_on_history(standalone)
    assert fallback_question(standalone, _history()) == standalone


def test_usable_rejects_empty_drifting_or_unresolved_rewrites() -> None:
    hist = _history()
    assert not usable("", FOLLOW_UP, hist)
    assert not usable("What is the capital of France?", FOLLOW_UP, hist)  # drops the user's words
    assert not usable("What benchmark does the paper use?", FOLLOW_UP, hist)  # "it" unresolved
    assert not usable(prompts.REFUSAL, FOLLOW_UP, hist)
    assert not usable(
        "The benchmark LeanAgent uses is LeanDojo.", FOLLOW_UP, hist
    )  # an answer, not a question
    assert usable("What benchmark does LeanAgent use for formal theorem proving?", FOLLOW_UP, hist)


def test_clean_llm_question_strips_labels_quotes_and_markers() -> None:
    assert clean_llm_question('Standalone question: "What benchmark does LeanAgent use? [1]"\nextra') == (
        "What benchmark does LeanAgent use?"
    )
    assert clean_llm_question("\n\n") == ""


def test_condense_uses_a_good_rewrite_and_falls_back_on_a_bad_one() -> None:
    good = ScriptedLLM(["What benchmark does LeanAgent use for formal theorem proving?"])
    out = condense(good, FOLLOW_UP, _history())
    assert out.method == "llm" and "LeanAgent" in out.question
    assert LEAN in good.prompts[0] and FOLLOW_UP in good.prompts[0]
    assert [(c.method, c.kwargs) for c in good.calls] == [("chat", {"max_tokens": CONDENSE_MAX_TOKENS})]

    for reply in ["", "Sure! Here is a question.", "What is the capital of France?", ConnectionError("down")]:
        out = condense(ScriptedLLM([reply]), FOLLOW_UP, _history())
        assert out.method == "fallback", reply
        assert out.question == f'What benchmark does "{LEAN}" use?'


def test_pointers_are_resolved_without_the_model() -> None:
    llm = ScriptedLLM([])
    out = condense(llm, "What benchmark does the second one use?", _history())
    assert out.method == "rule" and out.question == f'What benchmark does "{MRAG}" use?'
    assert llm.prompts == []


def test_rewrite_naming_another_cited_paper_is_rejected() -> None:
    # "it" means the previous exchange's main paper (LeanAgent), not the other cited one.
    assert not usable("What benchmark does MRAG-Bench Vision-Centric Evaluation use?", FOLLOW_UP, _history())
    out = condense(
        ScriptedLLM(["What benchmark does MRAG-Bench: Vision-Centric Evaluation use?"]), FOLLOW_UP, _history()
    )
    assert out.method == "fallback" and LEAN in out.question and MRAG not in out.question


def test_no_history_or_a_new_topic_means_no_condensing() -> None:
    llm = ScriptedLLM([])
    assert condense(llm, FOLLOW_UP, []).method == "none"
    new_topic = "Which papers study protein language model fitness and preference?"
    assert condense(llm, new_topic, _history()).question == new_topic
    assert llm.prompts == []


def test_format_history_is_short_and_names_cited_papers() -> None:
    long = [ChatTurn(role="user", content="q" * 5000)] * 10
    text = format_history(long)
    assert len(text) < 4000
    assert f"(1) {LEAN}" in format_history(_history())


def test_live_marker_filter_drops_markers_naming_no_source() -> None:
    f = LiveMarkerFilter([1, 2])
    pieces = [
        "LeanAgent [",
        "1",
        "] proves",
        " theorems [7]. See [2, 9] and [Source 2]",
        " arrays a[i]",
        " [done",
    ]
    out = "".join(f.feed(p) for p in pieces) + f.flush()
    assert out == "LeanAgent [1] proves theorems . See [2] and [2] arrays a[i] [done"


def test_gate_queues_then_refuses_when_the_line_is_full() -> None:
    queue = GenerationQueue(slots=1, max_waiting=1, timeout=5)
    entered = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def holder() -> None:
        with queue.slot():
            entered.set()
            release.wait(5)
            order.append("first")

    def waiter() -> None:
        with queue.slot():
            order.append("second")

    t1 = threading.Thread(target=holder)
    t1.start()
    entered.wait(5)
    t2 = threading.Thread(target=waiter)
    t2.start()
    deadline = time.monotonic() + 5
    while queue.stats()["waiting"] < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    with pytest.raises(BusyError) as info:
        with queue.slot():
            pass
    assert info.value.queue_full
    with pytest.raises(BusyError):
        queue.check()
    release.set()
    t1.join(5)
    t2.join(5)
    assert order == ["first", "second"]
    stats = queue.stats()
    assert (stats["running"], stats["waiting"], stats["slots"], stats["max_waiting"]) == (0, 0, 1, 1)
    assert stats["mean_answer_s"] is not None  # two slots were held and timed


def test_gate_times_out_with_a_503_kind_of_busy() -> None:
    queue = GenerationQueue(slots=1, max_waiting=4, timeout=0.2)
    with queue.slot():
        with pytest.raises(BusyError) as info:
            with queue.slot():
                pass
    assert not info.value.queue_full
    assert queue.stats()["running"] == 0 and queue.stats()["waiting"] == 0


def test_first_question_of_a_chat_is_answered_without_the_llm_when_off_topic(fake_rag) -> None:
    rag = fake_rag([])  # generative: any LLM call would show up in rag.llm.calls (and fail)
    answer = chat(rag, "What is the capital of France?")
    assert answer.refused and not answer.llm_called
    assert answer.standalone_question == "What is the capital of France?"
    assert rag.llm.calls == []


REWRITE = "What benchmark does LeanAgent use for formal theorem proving?"
LEAN_SENTENCE = (
    "LeanAgent successfully generates formal proofs for 155 theorems across 23 diverse Lean repositories [1]."
)


def test_chat_stream_condenses_with_the_llm_then_answers_the_rewrite(fake_rag) -> None:
    rag = fake_rag([REWRITE, LEAN_SENTENCE])
    events = list(chat_stream(rag, FOLLOW_UP, _history(), top_k=3))
    assert [type(e) for e in events] == [Condensed, Sources, Token, Final]
    assert events[0] == Condensed(standalone_question=REWRITE, method="llm")
    assert events[1].sources[0].title == LEAN and len(events[1].sources) == 3
    assert events[2].text == LEAN_SENTENCE
    answer = events[3].answer
    assert answer.question == FOLLOW_UP and answer.standalone_question == REWRITE
    assert answer.text == LEAN_SENTENCE and [c.title for c in answer.citations] == [LEAN]
    condense_call, answer_call = rag.llm.calls
    assert condense_call.method == "chat" and condense_call.kwargs == {"max_tokens": CONDENSE_MAX_TOKENS}
    assert f"Follow-up question: {FOLLOW_UP}" in condense_call.text and f"(1) {LEAN}" in condense_call.text
    assert answer_call.method == "stream_chat"
    assert f"Question: {REWRITE}" in answer_call.text and FOLLOW_UP not in answer_call.text


@pytest.mark.parametrize("reply", ["LeanAgent uses LeanDojo.", ConnectionError("down")])  # more: above
def test_a_garbage_condense_reply_falls_back_to_the_deterministic_rewrite(fake_rag, reply) -> None:
    rag = fake_rag([reply], answer={"mode": "evidence"})
    events = list(chat_stream(rag, FOLLOW_UP, _history(), top_k=3))
    fallback = f'What benchmark does "{LEAN}" use?'
    assert events[0] == Condensed(standalone_question=fallback, method="fallback")
    answer = final_answer(events)
    assert answer.standalone_question == fallback and answer.question == FOLLOW_UP
    assert answer.sources[0].title == LEAN and not answer.refused
    assert [c.method for c in rag.llm.calls] == ["chat"]  # evidence answer: the condense call only


def test_conversation_condenses_against_the_turns_it_kept(fake_rag) -> None:
    # follow-ups read against the shown papers are tests/test_followup.py's; here, the condensing
    rag = fake_rag([LEAN_SENTENCE, REWRITE, LEAN_SENTENCE, LEAN_SENTENCE], answer={"followups": False})
    conv = rag.conversation(top_k=3)
    first = conv.ask(Q1)
    assert first.text == LEAN_SENTENCE and first.standalone_question == Q1
    assert [t.role for t in conv.turns] == ["user", "assistant"] and conv.turns[1].citations == first.citations
    follow = conv.ask(FOLLOW_UP)
    assert follow.standalone_question == REWRITE and follow.question == FOLLOW_UP
    calls = rag.llm.calls
    assert [c.method for c in calls] == ["stream_chat", "chat", "stream_chat"]
    # The condense prompt holds the first exchange as the conversation kept it.
    assert f"User: {Q1}" in calls[1].text and f"(1) {LEAN}" in calls[1].text
    assert "155 theorems across 23 diverse Lean repositories" in calls[1].text
    assert len(conv.turns) == 4
    conv.reset()
    assert conv.turns == []
    assert conv.ask(FOLLOW_UP).standalone_question == FOLLOW_UP  # nothing left to condense against
    assert [c.method for c in rag.llm.calls].count("chat") == 1


def test_a_chat_holds_its_gate_slot_until_the_answer_is_done(fake_rag) -> None:
    queue = GenerationQueue(slots=1, max_waiting=0, timeout=1)
    rag = fake_rag([LEAN_SENTENCE])
    stream = chat_stream(rag, Q1, [], top_k=3, queue=queue)
    assert isinstance(next(stream), Condensed)
    assert queue.stats()["running"] == 1
    with pytest.raises(BusyError) as info:  # a second question while the first is generating
        list(chat_stream(rag, Q1, [], queue=queue))
    assert info.value.queue_full
    rest = list(stream)
    assert isinstance(rest[-1], Final) and rest[-1].answer.text == LEAN_SENTENCE
    assert queue.stats()["running"] == 0


def test_a_failing_answer_releases_the_gate_and_raises_llm_unavailable(fake_rag) -> None:
    queue = GenerationQueue(slots=1, max_waiting=0, timeout=1)
    rag = fake_rag([ConnectionError("refused"), LEAN_SENTENCE])
    with pytest.raises(LLMUnavailableError, match="ConnectionError: refused"):
        chat(rag, Q1, queue=queue)
    assert queue.stats()["running"] == 0
    assert chat(rag, Q1, queue=queue).text == LEAN_SENTENCE  # the slot is free again


@pytest.mark.slow
def test_follow_up_with_the_real_local_model_is_answered_from_the_paper_it_means(seed_rag) -> None:
    alone = seed_rag.retrieve(FOLLOW_UP)
    assert not alone.sources or alone.sources[0].title != LEAN  # the follow-up alone is ambiguous

    first = chat(seed_rag, Q1, top_k=3)
    assert first.sources[0].title == LEAN
    history = [
        ChatTurn(role="user", content=Q1),
        ChatTurn(role="assistant", content=first.text, citations=first.citations),
    ]
    follow = chat(seed_rag, FOLLOW_UP, history, top_k=3)
    assert follow.question == FOLLOW_UP
    # "it" is the paper the answer showed: quoted from its abstract, no search
    assert follow.followup is not None and follow.followup.kind == "detail"
    assert [s.title for s in follow.sources] == [LEAN] and follow.timings.retrieval_ms == 0
    assert follow.citations[0].supporting_text in follow.sources[0].text
    # with follow-up reading off, the rules condense it into a search that finds the same paper
    off = seed_rag.settings.model_copy(update={"answer": seed_rag.settings.answer.model_copy(update={"followups": False})})
    from rag import RAG

    condensed = chat(RAG(off), FOLLOW_UP, history, top_k=3)
    assert condensed.standalone_question != FOLLOW_UP and condensed.sources[0].title == LEAN
