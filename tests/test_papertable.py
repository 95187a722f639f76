"""The paper table (rag.store.papertable): BM25, papers and word counts beside the store, kept current by the
writes themselves, so no process scans the store to answer (issue 11, "scale past one machine").

Real embedded Chroma in tmp dirs, real embeddings; scans of the store are counted by wrapping
PaperStore.iter_records (the only way to read every chunk).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rag import RAG, Settings
from rag.errors import StoreError
from rag.retrieval.lexical import PaperIndex
from rag.settings import RetrievalSettings, StoreSettings
from rag.store.chroma import PaperStore, paper_table_path
from rag.store.papertable import PaperTable, TableStamp
from rag.text.terms import BM25_STOPWORDS, bm25_tokens

from .conftest import FULL_CORPUS, REPO, SEED_CORPUS, need, write_jsonl

SEED = [json.loads(line) for line in SEED_CORPUS.read_text(encoding="utf-8").splitlines()]


def _new_papers(n: int) -> list[dict]:
    seed_ids = {p["id"] for p in SEED}
    out = []
    with need(FULL_CORPUS).open(encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec["id"] not in seed_ids:
                out.append(rec)
            if len(out) >= n:
                return out
    return out




@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every full read of a store's chunks (a rebuild of its paper table) appends 1."""
    seen: list[int] = []
    real = PaperStore.iter_records

    def counted(self: PaperStore, include: list[str]) -> Any:
        seen.append(1)
        return real(self, include)

    monkeypatch.setattr(PaperStore, "iter_records", counted)
    return seen


def _rag(store: Path, **retrieval: Any) -> RAG:
    return RAG(Settings(store={"path": store, "auto_seed": False}, retrieval=retrieval))


def _ids(rag: RAG, query: str, mode: str = "bm25", k: int = 5) -> list[str]:
    return [s.paper_id for s in rag.retrieve(query, top_k=k, retriever=mode).sources]  # type: ignore[arg-type]


@pytest.mark.slow
def test_ingest_and_remove_update_the_table_without_a_scan(store: Path, tmp_path: Path, scans: list[int]) -> None:
    rag = _rag(store)
    assert rag.stats()["papers"] == 19
    new = _new_papers(3)
    report = rag.ingest([write_jsonl(tmp_path / "new.jsonl", new)], progress=False)
    assert report.added == 3
    assert rag.stats()["papers"] == 22
    for paper in new:
        assert _ids(rag, paper["title"], k=1) == [paper["id"]]
    assert rag.remove(new[0]["id"]) > 0
    assert rag.stats()["papers"] == 21
    assert new[0]["id"] not in _ids(rag, new[0]["title"], k=5)
    changed = dict(new[1], abstract=new[1]["abstract"] + " Zyxwvutian quokkas everywhere.")
    assert rag.ingest([write_jsonl(tmp_path / "changed.jsonl", [changed])], progress=False).updated == 1
    assert _ids(rag, "zyxwvutian quokkas", k=1) == [new[1]["id"]]
    assert scans == []  # every change went into the table with the write itself
    table = rag.store.current_table()
    assert table.stamp() == TableStamp(str(rag.store.collection.id), rag.store.sync().revision,
                                       rag.store.count_chunks())
    n, df = table.word_stats()  # word counts follow the changes (old abstract out, new one in)
    assert n == 21 and df["quokka"] == 1 and df["zyxwvutian"] == 1


@pytest.mark.slow
def test_a_new_process_opens_the_table_without_scanning_the_store(store: Path) -> None:
    code = (
        "import sys, json\n"
        "from rag.store.chroma import PaperStore\n"
        "def boom(*a, **k): raise SystemExit('scanned the store')\n"
        "PaperStore.iter_records = boom\n"
        "from rag import RAG, Settings\n"
        f"rag = RAG(Settings(store={{'path': {str(store)!r}, 'auto_seed': False}}))\n"
        "out = {m: [s.title for s in rag.retrieve('graph invariance spurious features', retriever=m).sources][:1]"
        " for m in ('dense', 'bm25', 'hybrid')}\n"
        "out['papers'] = rag.stats()['papers']\n"
        "print(json.dumps(out))\n"
    )
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["papers"] == 19
    for mode in ("dense", "bm25", "hybrid"):
        assert out[mode] == ["Learning Graph Invariance by Harnessing Spuriosity"], out


def test_a_stale_or_missing_table_is_rebuilt_once(store: Path, scans: list[int]) -> None:
    table_file = paper_table_path(StoreSettings(path=store), "iclr2025_papers")
    assert table_file.is_file()
    # A write the table did not see (an older version of rag, or another machine on a server store).
    paper_store = PaperStore(Settings(store={"path": store}).store)
    victim = SEED[0]
    found = paper_store.collection.get(where={"paper_id": victim["id"]}, include=[])
    paper_store._write("deleting behind the table's back", lambda c: c.delete(ids=found["ids"]))
    rag = _rag(store)
    assert rag.stats()["papers"] == 18
    assert victim["id"] not in _ids(rag, victim["title"])
    assert len(scans) == 1
    rag.retrieve("graph invariance")
    _rag(store).retrieve("graph invariance")
    assert len(scans) == 1  # once rebuilt, current for everyone
    for suffix in ("", "-wal", "-shm"):  # no table at all: an older store
        Path(f"{table_file}{suffix}").unlink(missing_ok=True)
    assert _rag(store).stats()["papers"] == 18
    assert len(scans) == 2


def test_a_table_from_another_schema_is_started_afresh(store: Path, scans: list[int]) -> None:
    table_file = paper_table_path(StoreSettings(path=store), "iclr2025_papers")
    with sqlite3.connect(table_file) as db:
        db.execute("UPDATE meta SET value = 'bm25s-old' WHERE key = 'tokenizer'")
    rag = _rag(store)
    assert _ids(rag, "Learning Graph Invariance by Harnessing Spuriosity", k=1)
    assert len(scans) == 1


def test_a_failed_ingest_leaves_table_and_store_as_they_were(store: Path, tmp_path: Path, scans: list[int]) -> None:
    rag = RAG(Settings(store={"path": store, "auto_seed": False}, ingest={"batch_papers": 2}))
    before_stamp = rag.store.current_table().stamp()
    embed = rag.embed_model
    calls = {"n": 0}
    real = embed.span_sums  # what ingest reads each paper (its windows and sentences) with

    def failing(*args: Any, **kw: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("the embedding model fell over")
        return real(*args, **kw)

    object.__setattr__(embed, "span_sums", failing)
    new = _new_papers(5)
    try:
        with pytest.raises(RuntimeError, match="fell over"):
            rag.ingest([write_jsonl(tmp_path / "new.jsonl", new)], progress=False)
    finally:
        object.__setattr__(embed, "span_sums", real)
    table = rag.store.current_table()
    assert scans == []  # the table matched the store after the failure: nothing to rebuild
    assert table.stamp() != before_stamp and table.count() == 21  # the first batch (2 papers) is in both
    assert set(table.paper_ids()) == {p["id"] for p in SEED} | {p["id"] for p in new[:2]}
    assert {pid for pid in rag.store.manifest()} == set(table.paper_ids())


def test_bm25_ranks_like_bm25_on_a_small_corpus(tmp_path: Path) -> None:
    table = PaperTable(tmp_path / "t.sqlite3")

    def chunks(pid: str, title: str, text: str, decision: str = "Poster") -> list[tuple[str, dict, str]]:
        meta = {"paper_id": pid, "title": title, "authors": "A. Author; B. Author", "decision": decision,
                "url": f"https://x.org/{pid}", "content_hash": f"h{pid}", "n_chunks": 2}
        return [(f"{pid}#h#0", {**meta, "chunk_index": 0, "kind": "title"}, ""),
                (f"{pid}#h#1", {**meta, "chunk_index": 1, "kind": "window"}, text)]

    corpus = [
        ("p1", "Graph neural networks for molecules", "We study message passing on molecular graphs.", "Oral"),
        ("p2", "Diffusion models for images", "Denoising diffusion generates images; graphs are not used.", "Poster"),
        ("p3", "Language models", "Transformers predict the next token. Graph graph graph graph.", "Poster"),
        ("p4", "Reinforcement learning", "Agents learn policies from rewards.", "Spotlight"),
    ]
    stamp = TableStamp("c", "1", 0)
    for pid, title, text, decision in corpus:
        stamp = table.write(chunks(pid, title, text, decision), TableStamp("c", "1", 0))
    assert stamp.chunks == 8 and table.count() == 4
    index = PaperIndex(table, table.stamp(), RetrievalSettings())
    ranked = index.bm25("graph networks", 10, None)
    assert [p for p, _ in ranked] == ["p1", "p3", "p2"]  # title match first; p4 shares no word
    assert all(s > 0 for _, s in ranked) and ranked[0][1] > ranked[1][1] > ranked[2][1]
    assert [p for p, _ in index.bm25("graph", 10, ["Poster"])] == ["p3", "p2"]
    assert index.bm25("the of and", 10, None) == []  # stop words only
    assert index.bm25("graph", 1, None) == [ranked[1]]  # k, and p3's four "graph"s beat p1's title
    assert bm25_tokens("Graphs, graphing & the Networks") == ["graph", "graph", "network"]
    from bm25s.stopwords import STOPWORDS_EN

    assert BM25_STOPWORDS == frozenset(STOPWORDS_EN)
    # the same scores as bm25s over title x3 + abstract (the index this table replaced)
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    old = bm25s.BM25(k1=1.2, b=0.5)
    old.index(bm25s.tokenize([" ".join([t] * 3 + [x]) for _, t, x, _ in corpus], stopwords="en", stemmer=stemmer,
                             show_progress=False), show_progress=False)
    expected = old.get_scores(bm25s.tokenize("graph networks", stemmer=stemmer, return_ids=False,
                                             show_progress=False)[0])
    assert dict(ranked) == pytest.approx({corpus[i][0]: float(v) for i, v in enumerate(expected) if v > 0}, rel=1e-4)
    # removing every chunk of a paper removes the paper; removing a stale chunk does not
    table.delete_chunks(["p1#h#0", "p1#h#1"], stamp)
    table.delete_chunks(["p3#old#7"], stamp)
    assert set(table.paper_ids()) == {"p2", "p3", "p4"}
    index = PaperIndex(table, table.stamp(), RetrievalSettings())
    assert [p for p, _ in index.bm25("graph networks", 10, None)] == ["p3", "p2"]


def test_a_server_store_keeps_its_table_locally_per_server_and_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cfg = StoreSettings(path=tmp_path / "chroma", chroma_url="http://127.0.0.1:8123")
    expected = tmp_path / "cache" / "iclr-rag" / "paper-tables" / "127.0.0.1_8123" / "papers.sqlite3"
    assert paper_table_path(cfg, "papers") == expected
    cfg = StoreSettings(path=tmp_path / "chroma", chroma_url="https://[::1]", paper_table_dir=tmp_path / "t")
    assert paper_table_path(cfg, "papers") == tmp_path / "t" / "__1_443" / "papers.sqlite3"
    assert paper_table_path(StoreSettings(path=tmp_path / "e"), "c") == tmp_path / "e" / "rag-papers.c.sqlite3"


def test_a_table_write_that_fails_is_one_store_error(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rag = _rag(store)
    rag.stats()

    def full(*a: Any, **k: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(PaperTable, "write", full)
    with pytest.raises(StoreError, match="not to its paper table"):
        rag.ingest([write_jsonl(tmp_path / "new.jsonl", _new_papers(1))], progress=False)
    monkeypatch.undo()
    assert _rag(store).stats()["papers"] == 20  # the table was stale and is rebuilt from the store
