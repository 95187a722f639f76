"""Who rewrites a follow-up: the rules for the bundled local model (no LLM call, no CPU stall), the
LLM for an endpoint or when asked (RAG_ANSWER__CONDENSE)."""

from __future__ import annotations

import time

from rag.chat.conversation import chat_stream
from rag.events import Condensed, Final

Q1 = "Which paper proposes a lifelong learning agent for formal theorem proving?"
LEAN = "LeanAgent: Lifelong Learning for Formal Theorem Proving"


def _history(rag):
    first = rag.chat(Q1, top_k=3)
    assert first.sources[0].title == LEAN
    return [{"role": "user", "content": Q1},
            {"role": "assistant", "content": first.text, "citations": [c.model_dump() for c in first.citations]}]


def test_local_model_condenses_by_rules_without_calling_it(fake_rag) -> None:
    rag = fake_rag(["unused"], answer={"mode": "evidence", "condense": "auto", "followups": False})
    assert not rag.settings.llm.is_remote and rag.settings.answer.condense == "auto"
    events = list(chat_stream(rag, "What benchmark does it use?", _history(rag), top_k=3))
    condensed = next(e for e in events if isinstance(e, Condensed))
    assert condensed.method == "fallback" and LEAN in condensed.standalone_question
    assert isinstance(events[-1], Final) and rag.llm.calls == []  # evidence answer, rules: no LLM call


def test_condense_llm_asks_the_model_and_keeps_a_usable_rewrite(fake_rag) -> None:
    rewrite = "What benchmark does LeanAgent use for lifelong learning in formal theorem proving?"
    rag = fake_rag([rewrite], answer={"mode": "evidence", "condense": "llm", "followups": False})
    events = list(chat_stream(rag, "What benchmark does it use?", _history(rag), top_k=3))
    condensed = next(e for e in events if isinstance(e, Condensed))
    assert condensed.method == "llm" and condensed.standalone_question == rewrite
    assert len(rag.llm.calls) == 1 and "What benchmark does it use?" in rag.llm.calls[0].text


def test_the_20000_character_history_request_costs_well_under_a_second_of_cpu(fake_rag) -> None:
    """Issue 10's stall: a 20,000-character assistant line and "what about it?" (it took 27 s of CPU
    in a regex, then ~4 s in the local model's condense call)."""
    rag = fake_rag(["unused"], answer={"mode": "evidence", "condense": "auto", "followups": False})
    history = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "[1] x" + " " * 19990 + "x"}]
    list(chat_stream(rag, "warm up the embedder", top_k=3))
    t0 = time.process_time()
    events = list(chat_stream(rag, "what about it?", history, top_k=3))
    cpu = time.process_time() - t0
    assert isinstance(events[-1], Final) and rag.llm.calls == []
    assert cpu < 1.0, f"{cpu:.2f} s of CPU"
