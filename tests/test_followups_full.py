"""Follow-ups on the 2,115 papers: the written conversations scored, and the same conversations
through every edge (Python `Conversation`, the native API with history, the OpenAI-compatible route
with messages only, `rag chat`, and the chat UI in a real browser) giving the library's answers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from evals.conversations import load_conversations, load_seeds, run, run_conversation, table
from rag.serve import ServerSettings, running

pytestmark = pytest.mark.slow

# Conversations driven through every edge: between them every kind of follow-up (metadata, detail,
# narrowing by decision and by topic, comparison, "more like", show all, new questions). Each opens
# with a seed question whose live answer still lists the recorded papers: when the answers change
# (rules, or the stored vectors), a conversation with the same kinds of turn whose seed answer
# still holds stands in (C33 → C45 → C53 → C57 for narrow/metadata/compare, C46 → C25 for
# metadata/detail/show all, when the stored vectors became late-chunked; C01 → C24 for
# metadata/detail/similar and C02 → C10 for narrowing twice and comparing, when the search's first papers
# that hold the topic joined the lists at stop 44: the "new question" turn is C57's).
THROUGH_EDGES = ("C24", "C10", "C14", "C57", "C25")
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def sets():
    seeds = load_seeds()
    return seeds, {c.cid: c for c in load_conversations(seeds=seeds)}


@pytest.fixture(scope="module")
def rules_rag(full_rag):
    """The product with the rules alone (no relevance model): the recorded seed answers were made so, and
    the edges are compared on conversations that open with them. The relevance model changes which papers a
    list holds, not how a follow-up is read; its follow-ups are scored on the recorded screens above."""
    from rag import RAG

    s = full_rag.settings
    return RAG(s.model_copy(update={"answer": s.answer.model_copy(update={"relevance_model": "off"})}))


@pytest.fixture(scope="module")
def library_answers(rules_rag, sets):
    """The library's answers (`RAG.chat` with the history a client keeps) to the edge conversations,
    each opened by asking its seed question live (as a user of any edge does)."""
    seeds, convs = sets
    out = {}
    for cid in THROUGH_EDGES:
        conv = convs[cid]
        conversation = rules_rag.conversation()
        opening = conversation.ask(conv.seed_question)
        # The same papers as the recorded seed answer; their order may move with quote scoring (the
        # eval scores follow-ups on the recorded screens, and the edges are compared with these answers).
        listed = [it.paper_id for it in opening.items]
        assert sorted(listed) == sorted(seeds[conv.sid].listed), f"{cid}: the seed answer lists other papers"
        out[cid] = [opening] + [conversation.ask(t.ask) for t in conv.turns]
    return out


def test_written_conversations_meet_the_targets_and_the_known_bad_fails(full_rag, sets) -> None:
    seeds, convs = sets
    conversations = list(convs.values())
    assert len(conversations) >= 60 and all(len(c.turns) >= 2 for c in conversations)

    def factory(overrides):
        if not overrides:
            return full_rag
        from rag import RAG

        s = full_rag.settings
        return RAG(s.model_copy(update={"answer": s.answer.model_copy(update=overrides)}))

    results, details = run(factory, [("product", {})], conversations, seeds, progress=False)
    bad, _ = run(factory, [("known-bad", {"followups": False})], conversations[:12], seeds, progress=False)
    print(table({**results, **bad}))
    r = results["product"]
    assert r["kind"] >= 0.95 and r["refs"] >= 0.95 and r["new"] >= 0.95, r
    assert r["metadata"] == 1.0, [d for d in details["product"] if d["metadata_ok"] is False]
    assert r["narrow"] >= 0.95, r  # the target (measured 0.956: see docs/conversations.md)
    # Without follow-up reading, "compare the first two" is condensed into "Compare <A> and <B>", which
    # gets those two papers' table (a new question naming papers): 7 of these 36 references (0.19).
    assert bad["known-bad"]["refs"] <= 0.25 and bad["known-bad"]["metadata"] == 0.0
    assert results["known-bad: all bound"]["new"] == 0.0


def test_a_follow_up_keeps_the_screen_it_was_asked_on(full_rag, sets) -> None:
    """Free-running (the product's own answers as history): references still resolve to the
    product's list, and metadata answers state the stored values."""
    seeds, convs = sets
    answers = run_conversation(full_rag, convs["C01"], seeds["S01"], forced=False)
    kinds = [a.followup.kind if a.followup else "new" for _, a in answers]
    assert kinds == [t.kind for t, _ in answers]
    first = answers[0][1]
    assert first.mode == "metadata" and "Patrick Leask" in first.text


def _native_history(answer: dict) -> dict:
    return {"role": "assistant", "content": answer["text"], "citations": answer["citations"]}


def test_native_api_and_openai_route_give_the_library_answers(rules_rag, sets, library_answers) -> None:
    _, convs = sets
    with running(rules_rag, ServerSettings(port=0, ui=False)) as srv, httpx.Client(base_url=srv.url, timeout=300) as http:
        for cid, expected in library_answers.items():
            questions = [convs[cid].seed_question] + [t.ask for t in convs[cid].turns]
            history: list[dict] = []
            messages: list[dict] = []
            for q, want in zip(questions, expected):
                got = http.post("/api/ask", json={"question": q, "history": history})
                assert got.status_code == 200, got.text
                body = got.json()
                assert body["text"] == want.text, (cid, q)
                assert (body["followup"] or {}).get("kind") == (want.followup.kind if want.followup else None)
                history += [{"role": "user", "content": q}, _native_history(body)]
                messages.append({"role": "user", "content": q})
                oai = http.post("/v1/chat/completions", json={"messages": messages})
                assert oai.status_code == 200, oai.text
                content = oai.json()["choices"][0]["message"]["content"]
                assert content.startswith(want.text), (cid, q, content[:300])  # then its reference list
                messages.append({"role": "assistant", "content": content})


def test_rag_chat_in_the_terminal_gives_the_library_answers(rules_rag, sets, library_answers) -> None:
    """The five conversations in one `rag chat` session, "new" starting each over."""
    _, convs = sets
    lines: list[str] = []
    for cid in library_answers:
        lines += ["new", convs[cid].seed_question, *(t.ask for t in convs[cid].turns)]
    env = {**os.environ, "RAG_STORE__PATH": str(rules_rag.settings.store.path), "RAG_STORE__AUTO_SEED": "false",
           "RAG_ANSWER__RELEVANCE_MODEL": "off"}
    out = subprocess.run(
        [sys.executable, "-m", "rag.cli", "--log-level", "WARNING", "chat"], input="\n".join(lines) + "\nexit\n",
        capture_output=True, text=True, env=env, timeout=900, check=True,
    ).stdout
    sessions = out.split("(new conversation)")[1:]
    assert len(sessions) == len(library_answers)
    for session, answers in zip(sessions, library_answers.values()):
        for answer in answers:
            assert answer.text.splitlines()[0] in session
            if answer.followup is not None:
                assert f"(read as: {answer.followup.note()}" in session


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium (scripts/setup.sh installs it)")
def test_conversations_in_the_browser(rules_rag, sets, library_answers, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    from tests.test_ui_browser import ARGS, _ask

    _, convs = sets
    with running(rules_rag, ServerSettings(port=0)) as srv, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        for cid, expected in library_answers.items():
            page = browser.new_context(viewport={"width": 1400, "height": 1100}).new_page()
            page.goto(srv.url, wait_until="load")
            page.wait_for_selector("#rag-input textarea", timeout=60_000)
            questions = [convs[cid].seed_question] + [t.ask for t in convs[cid].turns]
            for turn, (q, want) in enumerate(zip(questions, expected), start=1):
                frames = _ask(page, q, turn)
                shown = page.locator("#rag-chat [data-testid=bot]").nth(turn - 1).inner_text()
                panel = page.inner_text("#rag-sources")
                assert frames, (cid, q)
                if want.followup is not None:
                    assert want.followup.note()[:60] in panel, (cid, q, panel[:300])
                if want.mode == "metadata":
                    for c in want.citations:
                        assert c.supporting_text.split("; ")[0].split(": ", 1)[1] in shown, (cid, q, shown)
                for c in want.citations[:3]:
                    assert c.title[:40] in shown or c.title[:40] in panel, (cid, q, c.title)
                if "| Paper | Problem |" in want.text:  # the comparison is a table (rendered after the text)
                    page.wait_for_selector(f"#rag-chat [data-testid=bot] >> nth={turn - 1} >> table", timeout=30_000)
            page.screenshot(path=str(tmp_path / f"{cid}.png"), full_page=True)
            page.context.close()
        # An abstract's LaTeX ("we propose $\texttt{GraphEval}$") is rendered, not shown as source.
        page = browser.new_context(viewport={"width": 1400, "height": 1100}).new_page()
        page.goto(srv.url, wait_until="load")
        page.wait_for_selector("#rag-input textarea", timeout=60_000)
        _ask(page, "What is GraphEval?", 1)
        page.wait_for_selector("#rag-chat .katex", timeout=30_000)  # KaTeX renders after the text arrives
        assert "texttt" not in page.locator("#rag-chat [data-testid=bot]").first.inner_text()
        page.context.close()
        browser.close()
