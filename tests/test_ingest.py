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
from rag.corpus import load_papers
from rag.errors import CorpusError, RagError
from rag.store import PaperStore

from .conftest import REPO, SEED_CORPUS


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


def test_first_use_seeds_and_reingest_adds_nothing(tmp_path: Path) -> None:
    rag = RAG(Settings(store={"path": tmp_path / "chroma"}))
    assert rag.stats()["papers"] == 19
    before = _snapshot(rag.store)
    report = rag.ingest([SEED_CORPUS], progress=False)
    assert (report.added, report.updated, report.unchanged, report.chunks_written) == (0, 0, 19, 0)
    assert _snapshot(rag.store) == before


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
    docs = [d for _, m, d in rag.store.iter_records(["metadatas", "documents"]) if m["paper_id"] == recs[0]["id"]]
    assert docs == [recs[0]["abstract"]]

    n = rag.remove(recs[0]["id"])
    assert n == 1 and rag.stats()["papers"] == 18
    with pytest.raises(RagError, match="no paper with id"):
        rag.remove("does-not-exist")


def test_long_abstract_is_split_at_sentences_with_overlap(empty_rag: RAG, tmp_path: Path) -> None:
    sentences = [f"Sentence number {i} describes a distinct finding about sparse attention kernels." for i in range(80)]
    rec = {"id": "long1", "title": "A Very Long Abstract", "abstract": " ".join(sentences),
           "authors": [], "decision": "Poster", "source_url": "https://openreview.net/forum?id=long1"}
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(rec), encoding="utf-8")
    empty_rag.ingest([path], progress=False)
    chunks = sorted(
        ((m["chunk_index"], d) for _, m, d in empty_rag.store.iter_records(["metadatas", "documents"])),
    )
    assert len(chunks) >= 2
    for _, text in chunks:
        assert text.rstrip().endswith(".")  # cut at a sentence boundary
    first_tail = chunks[0][1].split(". ")[-1]
    assert first_tail.rstrip(".") in chunks[1][1]  # overlap: the next chunk repeats the end
    assert all(m["title"] == "A Very Long Abstract" for _, m, _ in empty_rag.store.iter_records(["metadatas"]))


def test_malformed_line_7_leaves_store_exactly_as_it_was(empty_rag: RAG, tmp_path: Path) -> None:
    empty_rag.ingest([SEED_CORPUS], progress=False)
    before = _snapshot(empty_rag.store)
    lines = (REPO.parent / "shared/data/iclr2025/papers.jsonl").read_text().splitlines()[:20]
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
    subset.write_text("\n".join(full_corpus.read_text().splitlines()[:300]) + "\n", encoding="utf-8")
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
    progressed = re.compile(r"\b([5-9]\d|1\d\d|2[0-4]\d)/300\b")
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
    assert 0 < len(partial) < 300
    assert rag.retrieve("graph neural networks", top_k=3, retriever="dense").sources  # still queryable

    report = rag.ingest([subset], progress=False)
    assert report.unchanged == len(partial)
    counts = _assert_consistent(rag.store)
    assert len(counts) == 300
    assert rag.store.count_chunks() == sum(counts.values())
    ids = {p.id for p in load_papers(subset).papers}
    assert set(counts) == ids
