"""`rag fetch`: a venue's accepted papers through the official OpenReview client, against a local
server that answers GET /notes as API v2 does for the client's own calls (openreview-py's
`OpenReviewClient.get_notes`: `content.venueid`, `sort=id`, `limit`, `after` cursor, `count`; notes
as `{"id", "content": {"title": {"value"}, ...}}`). There is no network to record from, so the
format is the one the client's source reads. Then the file is ingested and answered from."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from rag import RAG, Settings
from rag.cli import main
from rag.errors import ConfigError
from rag.ingest.corpus import load_papers
from rag.ingest.fetch import FetchError, decision_of, fetch_venue
from rag.settings import FetchSettings

VENUE = "ICLR.cc/2025/Conference"
KINDS = ["Oral", "Spotlight", "Poster", "Poster"]


def note(i: int, venueid: str = VENUE, abstract: bool = True) -> dict[str, Any]:
    nid = f"n{i:04d}x"
    content: dict[str, Any] = {
        "title": {"value": f"Paper {i}: sparse {'graph' if i % 2 else 'vision'} models at scale"},
        "authors": {"value": [f"Author {i}", f"Second Writer{i}"]},
        "venue": {"value": f"ICLR 2025 {KINDS[i % 4]}" if venueid == VENUE else "Submitted to ICLR 2025"},
        "venueid": {"value": venueid},
        "keywords": {"value": ["x"]},
    }
    if abstract:
        content["abstract"] = {"value": f"We study sparse models number {i}.  We show they scale well on "
                                        f"{'graphs' if i % 2 else 'images'} and beat dense baselines."}
    return {"id": nid, "forum": nid, "number": i, "cdate": 1727000000000 + i, "mdate": 1727000000000 + i,
            "invitations": [f"{VENUE}/-/Submission"], "readers": ["everyone"], "writers": [VENUE],
            "signatures": [f"{VENUE}/Submission{i}/Authors"], "domain": VENUE, "content": content}


class FakeOpenReview(ThreadingHTTPServer):
    def __init__(self, notes: list[dict[str, Any]]):
        super().__init__(("127.0.0.1", 0), Handler)
        self.notes = sorted(notes, key=lambda n: n["id"])
        self.requests: list[dict[str, list[str]]] = []
        self.rate_limit_at: set[int] = set()  # request numbers (1-based) answered 429 once
        self.fail_from: int | None = None  # request number from which every answer is a 400
        self.url = f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: FakeOpenReview

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        url = urlsplit(self.path)
        if url.path != "/notes":
            return self._json(404, {"name": "NotFoundError", "message": "no route"})
        q = parse_qs(url.query)
        srv = self.server
        srv.requests.append(q)
        n = len(srv.requests)
        if n in srv.rate_limit_at:
            srv.rate_limit_at.discard(n)
            return self._json(429, {"name": "RateLimitError", "message": "Too many requests"}, {"Retry-After": "1"})
        if srv.fail_from is not None and n >= srv.fail_from:
            return self._json(400, {"name": "Error", "message": "Service paused", "status": 400})
        venue = q.get("content.venueid", [None])[0]
        assert q.get("sort") == ["id"]
        hits = [x for x in srv.notes if x["content"]["venueid"]["value"] == venue]
        after = q.get("after", [None])[0]
        page = [x for x in hits if after is None or x["id"] > after][: int(q["limit"][0])]
        body: dict[str, Any] = {"notes": page}
        if q.get("count") == ["true"]:
            body["count"] = len(hits)
        self._json(200, body)


@pytest.fixture
def openreview_server():
    notes = [note(i) for i in range(60)] + [note(i, abstract=False) for i in range(60, 63)]
    notes += [note(i, venueid=f"{VENUE}/Rejected_Submission") for i in range(63, 80)]
    srv = FakeOpenReview(notes)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def cfg(srv: FakeOpenReview) -> FetchSettings:
    return FetchSettings(base_url=srv.url, page_size=25)


def test_a_venue_becomes_a_corpus_file_the_store_answers_from(openreview_server, tmp_path: Path) -> None:
    srv = openreview_server
    srv.rate_limit_at = {2}  # the second page is rate-limited once, then served
    out = tmp_path / "iclr.jsonl"
    report = fetch_venue(VENUE, out, cfg(srv), progress=False)
    assert (report.written, report.skipped_no_abstract, report.resumed) == (60, 3, 0)
    assert len(srv.requests) == 4  # pages of 25, 25 and 10 (short: the last), one of them asked twice
    assert srv.requests[0]["count"] == ["true"] and srv.requests[2] == srv.requests[1]  # the retry
    assert not out.with_name(out.name + ".partial").exists()
    loaded = load_papers(out)
    assert len(loaded.papers) == 60 and sum(loaded.skipped.values()) == 0
    first = loaded.papers[0]
    assert first.id == "n0000x" and first.url == "https://openreview.net/forum?id=n0000x"
    assert first.decision == "Oral" and first.authors == ("Author 0", "Second Writer0")
    assert "  " not in first.abstract  # whitespace collapsed
    assert {p.decision for p in loaded.papers} == {"Oral", "Spotlight", "Poster"}

    rag = RAG(Settings(store={"path": tmp_path / "store", "auto_seed": False}))
    assert rag.ingest([out], progress=False).added == 60
    answer = rag.ask("Which papers show sparse models scale well on graphs?")
    assert answer.citations and all(c.url.startswith("https://openreview.net/forum?id=n") for c in answer.citations)


def test_an_interrupted_fetch_resumes_where_it_stopped(openreview_server, tmp_path: Path) -> None:
    srv = openreview_server
    srv.fail_from = 2  # the first page arrives, then the service stops answering
    out = tmp_path / "venue.jsonl"
    with pytest.raises(FetchError, match="after 25 papers .*run the same command again to resume"):
        fetch_venue(VENUE, out, cfg(srv), progress=False)
    assert not out.exists()
    assert len(out.with_name(out.name + ".partial").read_text().splitlines()) == 25
    srv.fail_from, srv.requests = None, []
    report = fetch_venue(VENUE, out, cfg(srv), progress=False)
    assert (report.written, report.resumed) == (60, 25)
    assert srv.requests[0]["after"] == ["n0024x"]  # it did not start over
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 60

    other = tmp_path / "other.jsonl"  # a partial fetch of one venue is never continued as another
    srv.requests, srv.fail_from = [], 2
    with pytest.raises(FetchError):
        fetch_venue(VENUE, other, cfg(srv), progress=False)
    srv.fail_from = None
    with pytest.raises(FetchError, match="holds a partial fetch of 'ICLR.cc/2025/Conference', not 'NeurIPS.cc/2024/Conference'"):
        fetch_venue("NeurIPS.cc/2024/Conference", other, cfg(srv), progress=False)


def test_bad_venues_and_empty_venues_are_clear_errors(openreview_server, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not an OpenReview venue id"):
        fetch_venue("ICLR 2025", tmp_path / "x.jsonl", cfg(openreview_server))
    with pytest.raises(FetchError, match="no accepted papers with an abstract for venue 'ICML.cc/2031/Conference'"):
        fetch_venue("ICML.cc/2031/Conference", tmp_path / "x.jsonl", cfg(openreview_server), progress=False)
    assert decision_of("ICLR 2025 Spotlight") == "Spotlight" and decision_of("TMLR") == "TMLR"


def test_the_cli_fetches_with_progress_and_says_what_next(openreview_server, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAG_FETCH__PAGE_SIZE", "25")
    assert main(["fetch", "--venue", VENUE, "--base-url", openreview_server.url]) == 0
    said = capsys.readouterr()
    assert "wrote 60 papers of ICLR.cc/2025/Conference to ICLR.cc_2025_Conference.jsonl (3 without an abstract" in said.out
    assert "next: rag ingest ICLR.cc_2025_Conference.jsonl" in said.out
    assert "fetch" in said.err  # the progress bar
    assert len((tmp_path / "ICLR.cc_2025_Conference.jsonl").read_text().splitlines()) == 60
    assert main(["fetch", "--venue", "nope"]) == 1
    assert "not an OpenReview venue id" in capsys.readouterr().err
