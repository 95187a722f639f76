"""Links that ask a question again (rag.permalink): what they carry, what they refuse, and the
version stamp that says whether the store changed since a link was made."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from rag import RAG, Settings
from rag.cli import main
from rag.errors import InvalidRequestError
from rag.permalink import Permalink


def test_a_link_round_trips_its_question_and_options() -> None:
    link = Permalink("Which papers & why? 50% ok", 5, ("Oral", "Poster"), "bm25", True, "abc123")
    query = link.query()
    assert query == "q=Which+papers+%26+why%3F+50%25+ok&decision=Oral%2CPoster&top_k=5&retriever=bm25&all=1&v=abc123"
    assert Permalink.parse(parse_qs(query)) == link
    assert Permalink.parse({"q": "x"}) == Permalink("x")
    assert Permalink.parse({"top_k": "3"}) is None  # no question: not a link
    assert link.url("http://127.0.0.1:7860/").startswith("http://127.0.0.1:7860/?q=Which")


@pytest.mark.parametrize(("params", "says"), [
    ({"q": "x", "retriever": "magic"}, "retriever 'magic' is not one of dense"),
    ({"q": "x", "decision": "Oral,Best"}, "decision 'Best' is not one of Oral"),
    ({"q": "x", "top_k": "-2"}, "top_k '-2' is not a positive whole number"),
    ({"q": "x" * 5000}, "longer than 4000 characters"),
])
def test_a_bad_link_says_which_value_is_wrong(params: dict, says: str) -> None:
    with pytest.raises(InvalidRequestError, match=says):
        Permalink.parse(params)


def test_the_version_changes_with_the_store_and_the_cli_prints_the_link(tmp_path, capsys, monkeypatch) -> None:
    rag = RAG(Settings(store={"path": tmp_path / "store"}))
    link = rag.permalink("  Which paper proposes   LeanAgent? ", top_k=3, decisions=["Oral"])
    assert link.question == "Which paper proposes LeanAgent?" and link.version == rag.version()
    assert RAG(Settings(store={"path": tmp_path / "store"})).version() == link.version  # any process
    assert RAG(Settings(store={"path": tmp_path / "store"}, retrieval={"top_k": 9})).version() != link.version
    corpus = tmp_path / "one.jsonl"
    corpus.write_text(json.dumps({"id": "p1", "title": "A new paper on links", "abstract": "We add one paper. "
                                  "It changes the store."}) + "\n", encoding="utf-8")
    rag.ingest([corpus], progress=False)
    assert rag.version() != link.version

    monkeypatch.setenv("RAG_STORE__PATH", str(tmp_path / "store"))
    assert main(["ask", "--link", "--decision", "Oral", "Which paper proposes LeanAgent?"]) == 0
    url = capsys.readouterr().out.strip().splitlines()[-1].removeprefix("link: ")
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == ("http", "127.0.0.1:7860", "/")
    assert Permalink.parse(parse_qs(parts.query)) == Permalink(
        "Which paper proposes LeanAgent?", None, ("Oral",), None, False, rag.version())


def test_the_api_makes_the_same_link_as_the_library(seed_rag: RAG) -> None:
    from starlette.testclient import TestClient

    from rag.serve import ServerSettings, create_app

    from .fakes import rag_with_llm

    rag = rag_with_llm(seed_rag, None)
    q = "Which papers study formal theorem proving?"
    with TestClient(create_app(rag, ServerSettings(ui=False)), raise_server_exceptions=False) as client:
        got = client.post("/api/permalink", json={"question": q, "decisions": ["Oral"], "top_k": 3, "show_all": True})
        assert got.status_code == 200, got.text
        body = got.json()
        made = rag.permalink(q, decisions=["Oral"], top_k=3, show_all=True)
        assert body["query"] == made.query() and body["version"] == rag.version()
        assert body["url"] == "http://testserver/?" + made.query()
        assert Permalink.parse(parse_qs(urlsplit(body["url"]).query)) == made
        assert client.post("/api/permalink", json={"question": " "}).status_code == 400
        assert client.post("/api/permalink", json={"question": q, "top_k": 10_000}).status_code == 400
        assert client.post("/api/permalink", json={"question": q, "decisions": ["Workshop"]}).status_code == 400
