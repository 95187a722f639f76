"""The chat screen's presentation without a browser: escaping, the sources panel, the turn generator."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag import RAG, Settings
from rag.types import Answer, Citation, Source
from ui.render import (
    answer_markdown,
    chat_turn,
    display_messages,
    escape_markdown,
    highlighted_abstract,
    safe_url,
    sources_html,
)

XSS = '<img src=x onerror="window.__xss=1"> <script>window.__xss=2</script>'
ON_TOPIC = "Which paper proposes a lifelong learning agent for formal theorem proving?"


def _source(n: int, text: str = "First sentence here. The key finding is strong. Last one.", **kw) -> Source:
    base = dict(
        number=n,
        paper_id=f"p{n}",
        title=f"Paper {n}",
        url=f"https://openreview.net/forum?id=p{n}",
        decision="Poster",
        authors=["A. Author", "B. Author"],
        text=text,
        score=0.5,
    )
    base.update(kw)
    return Source(**base)


def _answer(text: str, sources: list[Source], cited: dict[int, str]) -> Answer:
    cites = [
        Citation(
            number=n,
            paper_id=f"p{n}",
            title=f"Paper {n}",
            supporting_text=sent,
            score=0.5,
            support=0.6,
            kind="generated",
        )
        for n, sent in cited.items()
    ]
    return Answer(question="q", text=text, citations=cites, sources=sources)


def _no_raw_tags(markup: str) -> None:
    assert "<img" not in markup and "<script" not in markup


def test_escape_markdown_leaves_no_html_or_markdown_syntax() -> None:
    out = escape_markdown(f"**bold** [x](javascript:alert(1)) {XSS} $x$ & done")
    _no_raw_tags(out)
    assert "&lt;img" in out and "&amp; done" in out
    assert "\\*\\*bold\\*\\*" in out and "\\[x\\]\\(javascript" in out


def test_answer_markdown_links_only_valid_markers() -> None:
    md = answer_markdown(f"LeanAgent works [1]. Wrong [7]. Tags {XSS} [1, 2].", linked=[1, 2])
    assert "[\\[1\\]](#rag-src-1-1)" in md
    assert "[\\[1\\]](#rag-src-1-1)[\\[2\\]](#rag-src-1-2)" in md
    assert "\\[7\\]" in md and "#rag-src-1-7" not in md
    assert "(#rag-src-3-2)" in answer_markdown("x [2]", linked=[2], turn=3)
    _no_raw_tags(md)


def test_sources_panel_escapes_corpus_text_and_splits_cited_from_uncited() -> None:
    evil = _source(
        2,
        text=f"Intro. {XSS} is the payload.",
        title=f"<script>alert(1)</script> {XSS}",
        authors=["<b>Eve</b>"],
        url="javascript:alert(1)",
    )
    html = sources_html(_answer("x [1]", [_source(1), evil], {1: "The key finding is strong."}))
    _no_raw_tags(html.replace("<mark>", ""))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;b&gt;Eve&lt;/b&gt;" in html
    assert "javascript:" not in html  # no link for a non-http URL
    assert html.index("Cited papers") < html.index('id="rag-src-1-1"') < html.index("not cited")
    assert html.index("not cited") < html.index('id="rag-src-1-2"')
    assert "<mark>The key finding is strong.</mark>" in html
    assert 'data-state="done"' in html


def test_earlier_answers_keep_their_own_cards() -> None:
    first = _answer("old [1]", [_source(1, title="Old paper")], {1: "The key finding is strong."})
    html = sources_html(
        _answer("new [1]", [_source(1)], {1: "Last one."}), turn=2, earlier=[(1, "first <question>", first)]
    )
    assert html.index('id="rag-src-2-1"') < html.index('id="rag-turn-1"') < html.index('id="rag-src-1-1"')
    assert "Answer 1: first &lt;question&gt;" in html


def test_highlight_and_safe_url() -> None:
    assert highlighted_abstract("A <b>. Key  part here. End.", "Key part here.") == (
        "A &lt;b&gt;. <mark>Key part here.</mark> End."
    )
    assert highlighted_abstract("No match <i>.", "absent") == "No match &lt;i&gt;."
    assert safe_url("https://openreview.net/forum?id=x") == "https://openreview.net/forum?id=x"
    for bad in ("javascript:alert(1)", "data:text/html,x", "//evil", ""):
        assert safe_url(bad) is None


def test_turn_generator_refuses_off_topic_questions_without_the_llm(seed_rag) -> None:
    turns_before: list[dict] = []
    views = list(chat_turn(seed_rag, "What is the capital of France?", turns_before))
    assert turns_before == []  # sessions own their turns: the caller's list is not touched
    assert views[0].messages[-1]["content"].startswith("*Searching")
    last = views[-1]
    assert last.done and last.error is None
    assert len(last.turns) == 1 and last.turns[0]["answer"]["refused"]
    assert "could not find ICLR 2025 papers" in last.messages[-1]["content"]
    assert "No retrieved abstract answers this question" in last.sources_html


def test_empty_store_gives_a_friendly_message(tmp_path: Path) -> None:
    rag = RAG(Settings(store={"path": tmp_path / "empty", "auto_seed": False}))
    last = list(chat_turn(rag, ON_TOPIC, []))[-1]
    assert last.done and last.error and "store is empty" in last.error
    assert "⚠️" in last.messages[-1]["content"]
    assert 'data-state="error"' in last.sources_html
    assert last.turns[-1]["answer"] is None  # a failed turn is shown but not used as chat history


def test_unreachable_llm_gives_a_friendly_message_with_sources(fake_rag) -> None:
    from .fakes import Broken

    shown = "LeanAgent achieves exceptional scores in stability and backward transfer [1]."
    rag = fake_rag([Broken(shown + " It", ConnectionError("connection refused"))])
    views = list(chat_turn(rag, ON_TOPIC, []))
    assert any("backward transfer" in v.messages[-1]["content"] and not v.done for v in views)  # streamed
    last = views[-1]
    assert last.error and "unreachable" in last.error and "ConnectionError: connection refused" in last.error
    assert re.search(r"LeanAgent", last.sources_html)  # retrieval worked; the papers are still shown
    assert 'data-state="error"' in last.sources_html
    assert last.turns[-1]["answer"] is None  # the half-streamed answer is not kept as chat history


@pytest.mark.slow
def test_turn_generator_streams_then_swaps_in_the_validated_answer(seed_rag) -> None:
    views = list(chat_turn(seed_rag, ON_TOPIC, [], top_k=3))
    streaming = [v for v in views if not v.done and "Searching" not in v.messages[-1]["content"]]
    assert len(streaming) >= 2  # sources, then the answer as it streams (an item at a time)
    last = views[-1]
    assert last.done and last.error is None
    answer = Answer.model_validate(last.turns[-1]["answer"])
    assert answer.citations, answer.text
    assert f"#rag-src-1-{answer.citations[0].number}" in last.messages[-1]["content"]
    assert last.markdown == answer.to_markdown() and "**References**" in last.markdown


def test_list_answer_keeps_its_items_and_removals_are_announced() -> None:
    text = "- **Graph <b>Paper</b>** [1]: We remove *spurious* features.\n- **Other** [2]: A second claim."
    md = answer_markdown(text, [1, 2], turn=3)
    lines = md.split("\n")
    assert lines[0].startswith("- **Graph &lt;b&gt;Paper&lt;/b&gt;** [\\[1\\]](#rag-src-3-1): ")
    assert "\\*spurious\\*" in lines[0]  # the body is escaped, the item structure kept
    assert lines[1].startswith("- **Other** [\\[2\\]](#rag-src-3-2): ")
    answer = Answer(question="q", text="A claim [1].", removed_unsupported=2, unsupported_sentences=["x", "y"])
    note = "(2 sentences the cited abstracts do not state were removed.)"
    assert answer.removal_note() == note and note in answer.to_markdown()
    shown = display_messages([{"question": "q", "answer": answer.model_dump(mode="json")}])
    assert "2 sentences the cited abstracts do not state were removed" in shown[-1]["content"].replace("\\", "")


def test_the_reading_of_the_question_is_shown_escaped() -> None:
    from rag.text.query import QueryIntent

    srcs = [_source(1)]
    answer = _answer("Paper 1 studies it [1].", srcs, {1: "The key finding is strong."})
    answer.intent = QueryIntent(
        kind="author", list_question=True, search_text="", authors=["Yoshua Bengio"],
        notes=["Papers by Yoshua Bengio (5)", "Only Oral papers (from 'orals') " + XSS],
    )
    html_ = sources_html(answer)
    assert 'class="rag-intent"' in html_ and "Papers by Yoshua Bengio (5)" in html_
    _no_raw_tags(html_)
    answer.intent = None
    assert "rag-intent" not in sources_html(answer)


def test_author_question_lists_all_their_papers_with_the_reading_shown(seed_rag) -> None:
    author = "Adarsh Kumarappan"  # LeanAgent's first author, in the seed corpus
    answer = seed_rag.ask(f"Which papers by {author} are at ICLR 2025?")
    assert not answer.refused and answer.intent is not None and answer.intent.kind == "author"
    assert [s.title for s in answer.sources] == ["LeanAgent: Lifelong Learning for Formal Theorem Proving"]
    assert answer.items and answer.items[0].title.startswith("LeanAgent")
    assert any(author in n for n in answer.intent.notes)
    assert "Papers by" in sources_html(answer)


def test_a_session_keeps_at_most_its_last_turns(seed_rag) -> None:
    """Issue 10: session history was unbounded. A session at its cap drops its oldest turn."""
    from ui.render import SESSION_TURNS

    first = list(chat_turn(seed_rag, "What is the capital of France?", []))[-1].turns[0]
    full = [dict(first, question=f"question {i}") for i in range(SESSION_TURNS)]
    last = list(chat_turn(seed_rag, "What is the capital of Spain?", full))[-1]
    assert len(last.turns) == SESSION_TURNS
    assert last.turns[0]["question"] == "question 1" and last.turns[-1]["question"] == "What is the capital of Spain?"


def test_the_chat_screen_is_built_with_every_control_the_browser_tests_drive(seed_rag) -> None:
    """Fast: the Gradio Blocks of ui.app (served and driven in tests/test_ui_browser.py)."""
    from ui.app import build_ui

    blocks = build_ui(seed_rag)
    ids = {c.get("props", {}).get("elem_id") for c in blocks.config["components"]}
    assert {"rag-status", "rag-chat", "rag-input", "rag-send", "rag-copy", "rag-clear", "rag-sources",
            "rag-decisions", "rag-topk", "rag-all"} <= ids


def test_the_table_of_a_searched_list_is_not_headed_as_papers_that_meet_the_question() -> None:
    # "The 4 papers here closest to the question:" was tabled as "Every paper that meets the question (4)"
    from ui.render import table_label

    searched = [{"answer": Answer(question="q", text="t", searched=True).model_dump()}]
    met = [{"answer": Answer(question="q", text="t").model_dump()}]
    assert table_label(searched, 4) == "The papers closest to the question (4)"
    assert table_label(met, 4) == "Every paper that meets the question (4)"
    assert table_label([], 0) == "Every paper that meets the question"


def test_a_refusal_that_shows_the_closest_papers_does_not_say_nothing_answers() -> None:
    # beside the papers closest to a list request, "No retrieved abstract answers this question" read as "nothing
    # fits" (docs/relevance.md §5w); with nothing to show it is still what the panel says
    from rag.types import AnswerItem

    related = AnswerItem(number=1, paper_id="p1", title="Paper 1", sentences=["We do X."], missing=["at test time"])
    answer = Answer(question="q", text="The papers closest to “X”, …", refused=True, sources=[_source(1)],
                    refusal_reason="the closest papers do not state: at test time", related=[related])
    shown = sources_html(answer)
    assert "The reading does not find every part of the question" in shown and "No retrieved abstract" not in shown
    assert "no abstract here" not in shown
    answer.related = []
    assert "No retrieved abstract answers this question" in sources_html(answer)
