"""The map of the field (toolkit issue, item 4): every stored paper placed in 2D from its stored vector,
labelled clusters, kept per store revision; from the library, the CLI and the HTTP API (the browser's
map is in test_ui_browser, the 2,115-paper timings in benchmarks/bench_toolkit.py)."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from starlette.testclient import TestClient

from rag import RAG, Settings
from rag.cli import main
from rag.fieldmap import HIGHLIGHT, MAX_HIGHLIGHT, FieldMap, compute
from rag.serve import ServerSettings, create_app

from .fakes import rag_with_llm

LEAN_ID = "Uo4EHT4ZZ8"  # LeanAgent, a seed paper
LEAN_TITLE = "LeanAgent: Lifelong Learning for Formal Theorem Proving"


@pytest.fixture
def own_rag(seed_rag: RAG, tmp_path: Path) -> RAG:
    """A RAG over a copy of the seed store (these tests change it)."""
    path = tmp_path / "chroma"
    shutil.copytree(seed_rag.settings.store.path, path)
    return RAG(Settings(store={"path": path}))


def test_every_paper_is_placed_in_a_labelled_cluster_and_the_map_is_kept_per_revision(own_rag: RAG) -> None:
    first = own_rag.field_map()
    ids = {r.paper_id for r in own_rag.store.current_table().all_rows()}
    assert first.papers == 19 and {p.paper_id for p in first.points} == ids and not first.cached
    assert all(0.0 <= p.x <= 1.0 and 0.0 <= p.y <= 1.0 for p in first.points)
    assert len({(p.x, p.y) for p in first.points}) == 19  # no two papers on one spot
    assert sum(c.size for c in first.clusters) == 19 and len(first.clusters) == 2
    for c in first.clusters:  # labels are words the cluster's papers use
        said = " ".join(f"{p.title}" for p in first.points if p.cluster == c.number).lower()
        texts = " ".join(r.text.lower() for r in own_rag.store.current_table().all_rows())
        assert c.label and all(term.split()[0] in texts + said for term in c.label.split(" · "))
    again = own_rag.field_map()
    assert again.cached and again.points == first.points
    # another process (a new RAG) reads the kept map; a changed store is mapped again
    other = RAG(own_rag.settings)
    assert other.field_map().cached and own_rag.store.field_map_path.is_file()
    other.remove(LEAN_ID)
    after = own_rag.field_map()
    assert not after.cached and after.papers == 18 and LEAN_ID not in {p.paper_id for p in after.points}


def _svg_points(svg: str) -> list[tuple[str, str, str]]:
    """(link, title, fill) of every point of a drawn map (Vega's SVG: a link around a circle whose
    aria-label is the paper's title)."""
    return [(html.unescape(link), html.unescape(title), fill) for link, title, fill in re.findall(
        r'<a xlink:href="([^"]*)"><path aria-label="([^"]*)"[^>]*aria-roledescription="circle"[^>]*fill="([^"]*)"', svg)]


def test_the_map_renders_as_svg_html_and_png_with_the_answers_papers_picked_out(
    own_rag: RAG, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("RAG_STORE__PATH", str(own_rag.settings.store.path))
    fmap = own_rag.field_map()
    picked = [fmap.points[0].paper_id, fmap.points[5].paper_id]
    svg = fmap.render("svg", picked, link=lambda pid: f"http://127.0.0.1:7860/?paper={pid}")
    points = _svg_points(svg)
    assert sorted(t for _, t, _ in points) == sorted(p.title for p in fmap.points)  # every paper, its title
    red = {link for link, _, fill in points if fill == HIGHLIGHT}
    assert red == {f"http://127.0.0.1:7860/?paper={pid}" for pid in picked}
    labels = re.findall(r'aria-roledescription="text mark"[^>]*>([^<]*)</text>', svg)
    assert {html.unescape(t) for t in labels} == {c.label for c in fmap.clusters}
    page = fmap.render("html", picked)  # interactive, and whole: no script from the network
    assert isinstance(page, str) and page.lstrip().lower().startswith("<!doctype html>")
    assert "https://openreview.net/forum?id=" in page and not re.search(r"<script[^>]+src=", page)
    png = tmp_path / "map.png"
    assert main(["map", "-o", str(png), "--no-progress"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_tiny_store_and_no_store_still_give_a_map() -> None:
    vectors = np.eye(3, 8, dtype=np.float32)
    fmap = compute(["a", "b", "c"], ["A", "B", "C"], ["x", "y", "z"], ["Poster"] * 3, vectors, "r1")
    assert fmap.papers == 3 and len(fmap.points) == 3 and len(fmap.clusters) == 1
    empty = compute([], [], [], [], np.zeros((0, 8), dtype=np.float32), "r0")
    assert empty.papers == 0 and empty.points == [] and "<svg" in str(empty.render("svg"))


def test_the_api_and_the_cli_give_the_same_map(own_rag: RAG, tmp_path: Path, capsys, monkeypatch) -> None:
    app = create_app(rag_with_llm(own_rag, None), ServerSettings(ui=False))
    fmap = own_rag.field_map()
    with TestClient(app, raise_server_exceptions=False) as client:
        got = client.get("/api/map")
        assert got.status_code == 200 and got.headers["content-type"].startswith("application/json")
        assert FieldMap.model_validate(got.json()).points == fmap.points
        svg = client.get("/api/map", params={"format": "svg", "highlight": [LEAN_ID]})
        assert svg.headers["content-type"].startswith("image/svg+xml")
        red = [(link, title) for link, title, fill in _svg_points(svg.text) if fill == HIGHLIGHT]
        assert red == [(f"http://testserver/?paper={LEAN_ID}", LEAN_TITLE)]  # a point opens its page here
        assert client.get("/api/map", params={"format": "html"}).text.lstrip().lower().startswith("<!doctype html>")
        png = client.get("/api/map", params={"format": "png"})
        assert png.headers["content-type"] == "image/png" and png.content[:4] == b"\x89PNG"
        assert client.get("/api/map", params={"format": "gif"}).status_code == 400
        many = client.get("/api/map", params={"highlight": [f"p{i}" for i in range(MAX_HIGHLIGHT + 1)]})
        assert many.status_code == 400 and "error" in many.json()
        doc = client.get("/openapi.json").json()
        assert "/api/map" in doc["paths"] and "FieldMap" in doc["components"]["schemas"]
    monkeypatch.setenv("RAG_STORE__PATH", str(own_rag.settings.store.path))
    out = tmp_path / "map.json"
    assert main(["map", "-o", str(out), "--no-progress"]) == 0
    assert FieldMap.model_validate(json.loads(out.read_text())).points == fmap.points
    assert "read from the kept map" in capsys.readouterr().err
    page = tmp_path / "map.html"
    assert main(["map", "-o", str(page), "--question", "Which papers study formal theorem proving?"]) == 0
    assert page.read_text().replace(" ", "").count('"picked":true') >= 1  # the answer's papers, in red
    assert "picked out" in capsys.readouterr().err
    assert main(["map", "-o", str(tmp_path / "map.gif")]) == 1
    assert "the map is written as json, svg, html, png" in capsys.readouterr().err
