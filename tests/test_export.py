"""Papers out as BibTeX, CSV, Markdown and JSON (rag.export): from the library, an answer, the CLI
and the HTTP API. The .bib of all 2,115 ICLR 2025 papers parses with two standard BibTeX parsers
(bibtexparser, pybtex) with zero errors, the right number of authors and unique keys."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field

import bibtexparser
import pytest
from pybtex.database import parse_string
from starlette.testclient import TestClient

from rag import RAG
from rag.cli import main
from rag.errors import InvalidRequestError, NotFoundError
from rag.export import FORMATS, MAX_PAPERS, bibtex_key, export, latex_escape, to_bibtex, to_csv, to_markdown
from rag.ingest.corpus import load_papers
from rag.serve import ServerSettings, create_app

from .fakes import rag_with_llm

LEAN_ID = "Uo4EHT4ZZ8"  # LeanAgent, a seed paper


@dataclass
class P:
    paper_id: str
    title: str
    authors: list[str] = field(default_factory=list)
    decision: str = ""
    url: str = ""


def parsed(bib: str) -> tuple[bibtexparser.Library, object]:
    lib = bibtexparser.parse_string(bib)
    assert lib.failed_blocks == [], [b.raw[:200] for b in lib.failed_blocks]
    return lib, parse_string(bib, "bibtex")  # pybtex raises on any syntax error


def test_latex_specials_names_and_keys_survive_a_bibtex_parser() -> None:
    hard = P("a-1", "50% of {Tricky} $x_1$ & #tags ~ ^ \\cmd: \x07 A Study", ["Jean-Luc Picard, Jr.",
             "Anna and Bob", "Zoë Ångström"], "Oral", "https://openreview.net/forum?id=a-1")
    no_url = P("b_2", "The Art of Testing", ["Ada Lovelace"], "", "javascript:alert(1)")
    assert latex_escape("50% {x} a_b & c\nd") == r"50\% \{x\} a\_b \& c d"
    assert bibtex_key(hard) == "picard2025tricky" and bibtex_key(no_url) == "lovelace2025art"
    assert bibtex_key(P("c", "On the")) == "anonymous2025paper"
    lib, db = parsed(to_bibtex([hard, no_url]))
    first = lib.entries[0]
    assert first.entry_type == "inproceedings" and first["year"] == "2025"
    assert first["booktitle"] == "The Thirteenth International Conference on Learning Representations"
    assert first["title"].startswith("{50\\% of \\{Tricky\\}") and "\x07" not in first["title"]
    # the comma and the lone "and" stay inside one name each
    assert [str(p) for p in db.entries["picard2025tricky"].persons["author"]][0] == "{Jean-Luc Picard, Jr.}"
    assert len(db.entries["picard2025tricky"].persons["author"]) == 3
    assert first["url"] == "https://openreview.net/forum?id=a-1" and first["note"] == "ICLR 2025 Oral"
    assert "url" not in lib.entries[1].fields_dict  # a link that is not http(s) is left out


def test_clashing_keys_get_the_paper_id_and_other_keys_stay_as_they_are() -> None:
    a, b = P("id-A", "Graphs at Scale", ["Li Wei"]), P("id_B", "Graphs for All", ["Wei Li", "X"])
    b2 = P("id_B", "Graphs for All", ["Jun Wei"])
    keys = [e.key for e in parsed(to_bibtex([a, b2]))[0].entries]
    assert keys == ["wei2025graphs-id-A", "wei2025graphs-id_B"]
    assert [e.key for e in parsed(to_bibtex([a, b]))[0].entries] == ["wei2025graphs", "li2025graphs"]


def test_csv_markdown_and_json_carry_the_same_papers() -> None:
    papers = [P("x1", "=HYPERLINK(evil)", ["@Mal", "Bob"], "Poster", "https://openreview.net/forum?id=x1"),
              P("-y2", "A *bold* [claim]", [], "", "")]
    rows = list(csv.DictReader(io.StringIO(to_csv(papers))))
    assert [r["paper_id"] for r in rows] == ["x1", "-y2"]  # ids as they are
    assert rows[0]["title"] == "'=HYPERLINK(evil)" and rows[0]["authors"] == "'@Mal; Bob"
    md = to_markdown(papers)
    assert md.startswith("1. [=HYPERLINK(evil)](https://openreview.net/forum?id=x1)")
    assert "2. A \\*bold\\* \\[claim\\]" in md
    assert json.loads(export(papers, "json"))[1] == {"paper_id": "-y2", "title": "A *bold* [claim]",
                                                      "authors": [], "decision": "", "url": ""}
    with pytest.raises(InvalidRequestError, match="unknown export format 'ris'; use one of bibtex"):
        export(papers, "ris")


def test_the_whole_corpus_exports_as_bibtex_without_a_parser_error(full_corpus) -> None:
    papers = [P(p.id, p.title, list(p.authors), p.decision, p.url) for p in load_papers(full_corpus).papers]
    assert len(papers) == 2115
    lib, db = parsed(to_bibtex(papers))
    assert len(lib.entries) == len(db.entries) == 2115  # keys unique (pybtex refuses duplicates)
    for paper, entry in zip(papers, lib.entries):
        assert len(db.entries[entry.key].persons.get("author", [])) == len(paper.authors), entry.key
        assert entry["url"] == paper.url


def test_the_library_exports_stored_papers_and_an_answers_citations(seed_rag: RAG) -> None:
    ids = [LEAN_ID, LEAN_ID]
    text = seed_rag.export(ids, "json")
    assert [p["paper_id"] for p in json.loads(text)] == [LEAN_ID]  # a repeat once
    assert "LeanAgent" in json.loads(text)[0]["title"] and json.loads(text)[0]["authors"]
    with pytest.raises(NotFoundError, match="no paper with id 'nope', 'gone' in the store"):
        seed_rag.export([LEAN_ID, "nope", "gone"], "bibtex")
    with pytest.raises(InvalidRequestError, match="at most"):
        seed_rag.export([f"id{i}" for i in range(MAX_PAPERS + 1)])
    with pytest.raises(InvalidRequestError, match="no paper ids given"):
        seed_rag.export([])
    answer = seed_rag.ask("Which paper proposes a lifelong learning agent for formal theorem proving?")
    assert answer.paper_ids() and answer.paper_ids()[0] == LEAN_ID
    lib, _ = parsed(answer.to_bibtex())
    assert [e["title"] for e in lib.entries] == ["{" + c.title + "}" for c in answer.cited_papers()]


def test_the_cli_writes_ids_or_an_answers_papers(seed_rag: RAG, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("RAG_STORE__PATH", str(seed_rag.settings.store.path))
    out = tmp_path / "papers.bib"
    assert main(["export", LEAN_ID, "--output", str(out)]) == 0
    assert parsed(out.read_text())[0].entries[0].key.endswith("2025leanagent")
    assert main(["export", "--format", "csv", "--question", "Which papers study spurious features?", "--all"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) >= 2 and all(r["url"].startswith("https://openreview.net/") for r in rows)
    assert main(["export", "no-such-id"]) == 1
    assert "no paper with id 'no-such-id'" in capsys.readouterr().err
    assert main(["export"]) == 1
    assert "give paper ids or --question" in capsys.readouterr().err


@pytest.fixture(scope="module")
def client(seed_rag: RAG):
    app = create_app(rag_with_llm(seed_rag, None), ServerSettings(ui=False))
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_api_returns_a_file_in_each_format(client: TestClient, fmt: str) -> None:
    resp = client.post("/api/export", json={"paper_ids": [LEAN_ID], "format": fmt})
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-disposition"].startswith('attachment; filename="iclr2025-papers.')
    assert "LeanAgent" in resp.text
    if fmt == "bibtex":
        assert resp.headers["content-type"] == "application/x-bibtex; charset=utf-8"
        parsed(resp.text)


@pytest.mark.parametrize(("body", "status", "says"), [
    ({"paper_ids": ["nope"]}, 404, "no paper with id 'nope'"),
    ({"paper_ids": [LEAN_ID], "format": "ris"}, 400, "format"),
    ({"paper_ids": []}, 400, "paper_ids"),
    ({"paper_ids": [f"p{i}" for i in range(1001)]}, 400, "paper_ids"),
    ({"paper_ids": LEAN_ID}, 400, "paper_ids"),
])
def test_bad_exports_are_clear_4xx(client: TestClient, body: dict, status: int, says: str) -> None:
    resp = client.post("/api/export", json=body)
    assert resp.status_code == status, resp.text
    assert says in resp.json()["error"]["message"]


def test_the_export_route_is_in_the_document(client: TestClient) -> None:
    op = client.get("/openapi.json").json()["paths"]["/api/export"]["post"]
    assert set(op["responses"]["200"]["content"]) == {"application/x-bibtex", "text/csv", "text/markdown",
                                                      "application/json"}
    assert "422" not in op["responses"] and {"400", "404", "413"} <= set(op["responses"])


def test_a_fresh_compare_question_with_named_papers_gets_the_comparison_table(seed_rag: RAG) -> None:
    from rag.text.citations import abstract_sentences

    answer = seed_rag.ask("Compare LeanAgent and BOFormer")
    assert answer.text.startswith("Side by side, in each abstract's own words")
    assert "| Paper | Problem | Method | Data | Result |" in answer.text
    titles = {c.title for c in answer.citations}
    assert any(t.startswith("LeanAgent") for t in titles) and any(t.startswith("BOFormer") for t in titles)
    abstracts = {s.paper_id: s.text for s in answer.sources}
    for item in answer.items:  # every cell is a sentence of that paper's own abstract
        assert item.sentences and all(s in abstract_sentences(abstracts[item.paper_id]) for s in item.sentences)
    assert answer.to_bibtex().count("@inproceedings") == 2
    # one named paper, or no comparison asked: the usual answer
    assert not seed_rag.ask("Compare LeanAgent with other provers").text.startswith("Side by side")
    assert not seed_rag.ask("What do LeanAgent and BOFormer propose?").text.startswith("Side by side")


# -- comparison tables ------------------------------------------------------------------------------
def _two_more(seed_rag: RAG) -> list[str]:
    return [LEAN_ID] + [p.paper_id for p in seed_rag.retriever.papers().records if p.paper_id != LEAN_ID][:2]


def test_a_comparison_of_chosen_papers_is_a_table_of_their_own_sentences(seed_rag: RAG) -> None:
    from rag.text.citations import abstract_sentences

    ids = _two_more(seed_rag)
    answer = seed_rag.compare(ids)
    assert [r.paper_id for r in answer.comparison] == ids and [r.number for r in answer.comparison] == [1, 2, 3]
    abstracts = {s.paper_id: s.text for s in answer.sources}
    for row in answer.comparison:  # every cell is a sentence of that paper's abstract, or empty
        cells = [row.problem, row.method, row.data, row.result]
        assert any(cells) and all(not c or c in abstract_sentences(abstracts[row.paper_id]) for c in cells)
    rows = list(csv.DictReader(io.StringIO(answer.comparison_table("csv"))))
    assert [r["paper_id"] for r in rows] == ids
    assert [r["method"] for r in rows] == [r.method for r in answer.comparison]
    assert json.loads(answer.comparison_table("json"))[0]["title"].startswith("LeanAgent")
    table = answer.comparison_table("markdown").splitlines()
    assert table[0] == "| Paper | Problem | Method | Data | Result |" and len(table) == 2 + len(ids)
    # a question's comparison carries the same rows
    asked = seed_rag.ask("Compare LeanAgent and BOFormer")
    assert [r.title.split(":")[0] for r in asked.comparison] == ["LeanAgent", "BOFormer"]


def test_bad_comparisons_are_clear_errors(seed_rag: RAG) -> None:
    with pytest.raises(InvalidRequestError, match="2 to 6 different papers, not 1"):
        seed_rag.compare([LEAN_ID, LEAN_ID])
    with pytest.raises(NotFoundError, match="no paper with id 'nope'"):
        seed_rag.compare([LEAN_ID, "nope"])
    with pytest.raises(InvalidRequestError, match="not a comparison"):
        seed_rag.ask("Which paper proposes a lifelong learning agent for formal theorem proving?").comparison_table()
    with pytest.raises(InvalidRequestError, match="unknown table format 'xlsx'"):
        seed_rag.compare(_two_more(seed_rag)).comparison_table("xlsx")


@pytest.mark.parametrize("fmt", ["json", "csv", "markdown"])
def test_the_api_compares_papers_in_each_format(client: TestClient, seed_rag: RAG, fmt: str) -> None:
    ids = _two_more(seed_rag)
    resp = client.post("/api/compare", json={"paper_ids": ids, "format": fmt})
    assert resp.status_code == 200, resp.text
    assert resp.text == seed_rag.compare(ids).comparison_table(fmt)


@pytest.mark.parametrize(("body", "status", "says"), [
    ({"paper_ids": [LEAN_ID, "nope"]}, 404, "no paper with id 'nope'"),
    ({"paper_ids": [LEAN_ID]}, 400, "paper_ids"),
    ({"paper_ids": [LEAN_ID, LEAN_ID]}, 400, "different papers"),
    ({"paper_ids": [f"p{i}" for i in range(7)]}, 400, "paper_ids"),
    ({"paper_ids": [LEAN_ID, "x"], "format": "bibtex"}, 400, "format"),
])
def test_bad_compare_requests_are_clear_4xx(client: TestClient, body: dict, status: int, says: str) -> None:
    resp = client.post("/api/compare", json=body)
    assert resp.status_code == status, resp.text
    assert says in resp.json()["error"]["message"]


def test_the_cli_writes_a_comparison(seed_rag: RAG, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("RAG_STORE__PATH", str(seed_rag.settings.store.path))
    ids = _two_more(seed_rag)
    out = tmp_path / "table.csv"
    assert main(["compare", *ids, "--format", "csv", "-o", str(out)]) == 0
    assert [r["paper_id"] for r in csv.DictReader(out.open(encoding="utf-8"))] == ids
    assert main(["compare", ids[0]]) == 1
    assert "2 to 6 different papers" in capsys.readouterr().err
