"""Ingestion into a real embedded Chroma: idempotence, updates, removal, atomicity, chunking."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rag import RAG, Settings
from rag.errors import CorpusError, RagError
from rag.ingest.corpus import load_papers
from rag.store.chroma import PaperStore

from .conftest import FULL_CORPUS, SEED_CORPUS, need


def _snapshot(store: PaperStore) -> list[tuple[str, str, str | None]]:
    return sorted((cid, json.dumps(meta, sort_keys=True), doc) for cid, meta, doc in
                  store.iter_records(["metadatas", "documents"]))


def _assert_consistent(store: PaperStore) -> dict[str, int]:
    """Every paper has exactly its n_chunks chunks of one version; no duplicates."""
    manifest = store.manifest()
    for pid, entry in manifest.items():
        assert len(entry.hashes) == 1, pid
        assert len(entry.chunk_ids) == entry.expected_chunks, pid
        assert len(set(entry.chunk_ids)) == len(entry.chunk_ids), pid
    return {pid: len(e.chunk_ids) for pid, e in manifest.items()}


@pytest.fixture()
def empty_rag(tmp_path: Path) -> RAG:
    return RAG(Settings(store={"path": tmp_path / "chroma", "auto_seed": False}))


@pytest.mark.slow
def test_first_use_seeds_and_reingest_adds_nothing(tmp_path: Path) -> None:
    rag = RAG(Settings(store={"path": tmp_path / "chroma"}))
    assert rag.stats()["papers"] == 19
    before = _snapshot(rag.store)
    report = rag.ingest([SEED_CORPUS], progress=False)
    assert (report.added, report.updated, report.unchanged, report.chunks_written) == (0, 0, 19, 0)
    assert _snapshot(rag.store) == before


@pytest.mark.slow
def test_changed_abstract_replaces_old_chunks_and_remove(empty_rag: RAG, tmp_path: Path) -> None:
    rag = empty_rag
    rag.ingest([SEED_CORPUS], progress=False)
    recs = [json.loads(line) for line in SEED_CORPUS.read_text().splitlines()]
    recs[0]["abstract"] = "A completely rewritten abstract about reverse bottlenecks and synthetic data."
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join(json.dumps(r) for r in recs), encoding="utf-8")
    report = rag.ingest([changed], progress=False)
    assert (report.added, report.updated, report.unchanged) == (0, 1, 18)
    counts = _assert_consistent(rag.store)
    assert len(counts) == 19
    parts = sorted(
        (m["chunk_index"], m["kind"], d)
        for _, m, d in rag.store.iter_records(["metadatas", "documents"])
        if m["paper_id"] == recs[0]["id"]
    )
    assert [(k, d) for _, k, d in parts] == [("title", ""), ("window", recs[0]["abstract"])]

    n = rag.remove(recs[0]["id"])
    assert n == 2 and rag.stats()["papers"] == 18
    with pytest.raises(RagError, match="no paper with id"):
        rag.remove("does-not-exist")


def test_long_abstract_is_covered_by_overlapping_windows_within_the_model_limit(empty_rag: RAG, tmp_path: Path) -> None:
    from rag.text.chunking import paper_chunks, token_counter

    sentences = [f"Sentence number {i} describes a distinct finding about sparse attention kernels." for i in range(80)]
    sentences[40] = "An unusually long sentence " + "with many many words " * 80 + "ends here."
    rec = {"id": "long1", "title": "A Very Long Abstract", "abstract": " ".join(sentences),
           "authors": [], "decision": "Poster", "source_url": "https://openreview.net/forum?id=long1"}
    count, limit = token_counter(empty_rag.embed_model)
    assert limit == 256  # read from the model, not configured
    chunks = paper_chunks(rec["title"], rec["abstract"], 3, 2, limit, count)
    assert chunks[0].kind == "title" and chunks[0].embed_text == rec["title"]
    windows = chunks[1:]
    assert all(w.embed_text.startswith(rec["title"] + "\n") for w in windows)
    # Every window but the one holding the over-long sentence fits the model's 256 word pieces.
    over = [w for w, n in zip(windows, count([w.embed_text for w in windows])) if n + 2 > limit]
    assert len(over) == 1 and "unusually long" in over[0].embed_text
    # The windows' documents are the abstract exactly once, in order; windows overlap by a sentence.
    assert " ".join(w.document for w in windows if w.document) == rec["abstract"]
    assert sentences[2] in windows[0].embed_text and sentences[2] in windows[1].embed_text

    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(rec), encoding="utf-8")
    empty_rag.ingest([path], progress=False)
    stored = sorted((m["chunk_index"], d) for _, m, d in empty_rag.store.iter_records(["metadatas", "documents"]))
    assert len(stored) == len(chunks) and [d for _, d in stored] == [c.document for c in chunks]
    assert all(m["title"] == "A Very Long Abstract" for _, m, _ in empty_rag.store.iter_records(["metadatas"]))
    source = empty_rag.retrieve("sparse attention kernels findings").sources[0]
    assert source.paper_id == "long1" and source.text == rec["abstract"]  # the whole abstract, once


@pytest.mark.slow
def test_malformed_line_7_leaves_store_exactly_as_it_was(empty_rag: RAG, tmp_path: Path) -> None:
    empty_rag.ingest([SEED_CORPUS], progress=False)
    before = _snapshot(empty_rag.store)
    lines = need(FULL_CORPUS).read_text().splitlines()[:20]
    lines[6] = lines[6][:-15]  # truncate line 7
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        empty_rag.ingest([SEED_CORPUS, bad], progress=False)
    assert err.value.line == 7 and str(bad) in str(err.value)
    assert _snapshot(empty_rag.store) == before


@pytest.mark.slow
def test_killed_ingest_leaves_queryable_store_that_a_rerun_completes(tmp_path: Path, full_corpus: Path) -> None:
    subset = tmp_path / "subset.jsonl"
    subset.write_text("\n".join(full_corpus.read_text().splitlines()[:120]) + "\n", encoding="utf-8")
    env = dict(os.environ, RAG_STORE__PATH=str(tmp_path / "chroma"), RAG_STORE__AUTO_SEED="false",
               RAG_INGEST__BATCH_PAPERS="16")
    proc = subprocess.Popen([sys.executable, "-m", "rag.cli", "ingest", str(subset)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    chunks: list[bytes] = []
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    reader = threading.Thread(target=lambda: [chunks.append(b) for b in iter(lambda: os.read(fd, 4096), b"")],
                              daemon=True)
    reader.start()
    deadline = time.time() + 180
    progressed = re.compile(r"\b([3-9]\d|10\d|11[0-5])/120\b")  # two batches of 16 written, not all
    while time.time() < deadline and proc.poll() is None:
        if progressed.search(b"".join(chunks).decode(errors="replace")):
            break
        time.sleep(0.1)
    seen = b"".join(chunks).decode(errors="replace")
    assert proc.poll() is None, f"ingest ended before it could be killed:\n{seen[-2000:]}"
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    settings = Settings(store={"path": tmp_path / "chroma", "auto_seed": False})
    rag = RAG(settings)
    partial = _assert_consistent(rag.store)
    assert 0 < len(partial) < 120
    assert rag.retrieve("graph neural networks", top_k=3, retriever="dense").sources  # still queryable

    report = rag.ingest([subset], progress=False)
    assert report.unchanged == len(partial)
    counts = _assert_consistent(rag.store)
    assert len(counts) == 120
    assert rag.store.count_chunks() == sum(counts.values())
    ids = {p.id for p in load_papers(subset).papers}
    assert set(counts) == ids
