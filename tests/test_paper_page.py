"""A paper's page (toolkit issue, item 2): one stored paper's metadata and abstract, then its nearest
papers, from the library, the CLI and the HTTP API (the browser's `/?paper=ID` is in test_ui_browser)."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from rag import RAG
from rag.cli import main
from rag.errors import InvalidRequestError, NotFoundError
from rag.serve import ServerSettings, create_app

from .fakes import rag_with_llm

LEAN_ID = "Uo4EHT4ZZ8"  # LeanAgent, a seed paper


def test_a_papers_page_shows_it_whole_then_its_nearest_papers(seed_rag: RAG) -> None:
    page = seed_rag.paper_page(LEAN_ID, neighbours=3)
    row = seed_rag.papers([LEAN_ID])[0]
    main_src, *near = page.sources
    assert main_src.paper_id == LEAN_ID and main_src.number == 1
    assert page.text.startswith(f"**{row.title}** [1]") and row.text in page.text  # the whole abstract
    assert ", ".join(row.authors[:2]) in page.text and row.url in page.text
    assert [s.number for s in near] == [2, 3, 4] and LEAN_ID not in {s.paper_id for s in near}
    similar = seed_rag.retrieve(f'Papers similar to "{row.title}"', top_k=4)
    assert [s.paper_id for s in near] == [s.paper_id for s in similar.sources if s.paper_id != LEAN_ID][:3]
    assert {c.number for c in page.citations} == {1, 2, 3, 4} and all(f"[{n}]" in page.text for n in (1, 2, 3, 4))
    assert seed_rag.paper_page(LEAN_ID, neighbours=0).sources == [main_src]


def test_bad_paper_pages_are_clear_errors(seed_rag: RAG) -> None:
    with pytest.raises(NotFoundError, match="no paper with id 'nope'"):
        seed_rag.paper_page("nope")
    with pytest.raises(InvalidRequestError, match="neighbours must be 0 to 20"):
        seed_rag.paper_page(LEAN_ID, neighbours=21)


def test_the_api_and_the_cli_give_the_same_page(seed_rag: RAG, capsys, monkeypatch) -> None:
    app = create_app(rag_with_llm(seed_rag, None), ServerSettings(ui=False))
    with TestClient(app, raise_server_exceptions=False) as client:
        got = client.get(f"/api/papers/{LEAN_ID}", params={"neighbours": 2})
        assert got.status_code == 200, got.text
        assert got.json()["text"] == seed_rag.paper_page(LEAN_ID, 2).text
        missing = client.get("/api/papers/nope")
        assert missing.status_code == 404 and "no paper with id 'nope'" in missing.json()["error"]["message"]
        assert client.get(f"/api/papers/{LEAN_ID}", params={"neighbours": 99}).status_code == 400
        assert "/api/papers/{paper_id}" in client.get("/openapi.json").json()["paths"]
    monkeypatch.setenv("RAG_STORE__PATH", str(seed_rag.settings.store.path))
    assert main(["paper", LEAN_ID, "--json", "--neighbours", "2"]) == 0
    assert json.loads(capsys.readouterr().out)["text"] == seed_rag.paper_page(LEAN_ID, 2).text
