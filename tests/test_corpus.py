"""Corpus loading: formats, skipped records, malformed input, duplicates, text kept intact."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from rag.errors import CorpusError
from rag.ingest.corpus import load_many, load_papers, seed_path

from .conftest import DATA, SHARED_SEED, need


def _records(n: int) -> list[dict]:
    return [
        {"id": f"p{i}", "title": f"Paper {i}", "abstract": f"Abstract number {i} about topic {i}.",
         "authors": ["A. Author", "B. Author"], "decision": "Poster",
         "source_url": f"https://openreview.net/forum?id=p{i}"}
        for i in range(1, n + 1)
    ]


def test_builtin_seed_corpus_is_the_shared_seed() -> None:
    ours = load_papers(seed_path())
    theirs = load_papers(need(SHARED_SEED))
    assert len(ours.papers) == 19
    assert ours.papers == theirs.papers


def test_full_corpus_keeps_latex_and_unicode_byte_for_byte(full_corpus: Path) -> None:
    raw = {}
    for line in full_corpus.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        raw[d["id"]] = d["abstract"].strip()
    report = load_papers(full_corpus)
    assert len(report.papers) == 2115
    assert all(p.abstract == raw[p.id] for p in report.papers)
    assert any("$" in p.abstract and any(ord(c) > 127 for c in p.abstract) for p in report.papers)


def test_accepted_skips_records_without_abstract_and_counts_them() -> None:
    report = load_papers(need(DATA / "iclr2025" / "accepted.jsonl"))
    assert len(report.papers) == 2115
    assert report.skipped == {"no abstract": 1589}


def test_json_array_and_csv(tmp_path: Path) -> None:
    recs = _records(3)
    arr = tmp_path / "papers.json"
    arr.write_text(json.dumps(recs), encoding="utf-8")
    assert [p.id for p in load_papers(arr).papers] == ["p1", "p2", "p3"]

    path = tmp_path / "papers.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["title", "abstract", "decision"])
        w.writeheader()
        w.writerow({"title": "Only Title", "abstract": "An abstract with $x^2$ and ü.", "decision": "Oral"})
        w.writerow({"title": "No abstract here", "abstract": "", "decision": "Poster"})
    report = load_papers(path)
    assert len(report.papers) == 1
    paper = report.papers[0]
    assert paper.abstract == "An abstract with $x^2$ and ü." and paper.decision == "Oral"
    assert paper.id.startswith("t-")  # stable id derived from the title
    assert report.skipped == {"no abstract": 1}


def test_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    lines = [json.dumps(r) for r in _records(10)]
    lines[6] = '{"id": "broken", "title": "x", "abstract": '  # line 7
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        load_papers(path)
    assert err.value.line == 7
    assert f"{path}:7:" in str(err.value)


def test_record_without_title_and_wrong_types_are_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "a", "abstract": "text"}) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r":1: record has no title"):
        load_papers(path)
    path.write_text(json.dumps(_records(1)[0]) + "\n" + json.dumps(["not", "an", "object"]) + "\n")
    with pytest.raises(CorpusError, match=r":2: expected an object"):
        load_papers(path)


def test_csv_without_required_columns(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("name,summary\nx,y\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="lacks column"):
        load_papers(path)


def test_repeated_id_is_kept_once(tmp_path: Path) -> None:
    recs = _records(3) + [_records(1)[0]]
    path = tmp_path / "dup.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in recs), encoding="utf-8")
    report = load_papers(path)
    assert [p.id for p in report.papers] == ["p1", "p2", "p3"]
    assert report.skipped == {"duplicate id": 1}
    both = load_many([path, path])
    assert len(both.papers) == 3 and both.skipped["duplicate id"] == 5


def test_unknown_format_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="file not found"):
        load_papers(tmp_path / "nope.jsonl")
    other = tmp_path / "papers.xml"
    other.write_text("<x/>")
    with pytest.raises(CorpusError, match="unknown corpus format"):
        load_papers(other)
