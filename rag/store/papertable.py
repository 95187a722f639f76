"""The paper table: a SQLite file beside the store with one row per paper, kept current by the writes.

A process that starts reads papers, BM25 and word statistics from here instead of scanning every
chunk of the store (a scan of 100,000 papers takes minutes; opening this file takes milliseconds).

* **What it holds**: `papers` (id, title, authors, decision, url, the abstract as the chunks' documents
  join to it, content hash); `chunks` (chunk id → paper, content hash, chunk count: what ingest
  compares, so an ingest reads no store metadata either); each paper's BM25 terms (tokenized as
  bm25s tokenizes: lower case, `\\w\\w+` words, English stop words out, Snowball stems) as term ids
  with their counts in the title and in the abstract, and `vocab` (term → id), from which a process
  builds its in-memory BM25 index in a second or two (rag.retrieval.lexical.Bm25Index); `words`, the document
  frequency of every word stem (rag.text.terms); a cache of the query catalog (rag.text.query.Catalog) for the
  stamp it was built at.
* **Kept current**: every write of the store (PaperStore.write / delete_chunks) changes the table in
  the same lock and one SQLite transaction, only for the papers written or removed, and records the
  store stamp it now reflects: (collection id, revision, chunk count).
* **Stale**: a table whose stamp is not the store's (a missing file, an older version, a Chroma
  server store written from another machine) is rebuilt once from a scan of the store, under the
  table's lock, with progress logging.
* **Readers** in other processes see a write when it commits (SQLite WAL): they take no lock unless
  the stamps differ, and then wait for the writer's transaction rather than rebuild.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import pickle
import sqlite3
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

from rag.store.locks import ProcessLock
from rag.text.terms import BM25_TOKENIZER, STEMS, bm25_tokens, stem_set

logger = logging.getLogger(__name__)

SCHEMA = "3"
TOKENIZER = f"{BM25_TOKENIZER}/{STEMS}"  # BM25's terms and the word stems: another rebuilds them
SQLITE_CACHE_KB = 256  # page cache of each thread's connection to a table


class TableStamp(NamedTuple):
    """The store state a table reflects: its collection, revision and chunk count."""

    collection: str
    revision: str
    chunks: int


@dataclass
class PaperRow:
    """One paper as the table holds it."""

    paper_id: str
    title: str
    authors: list[str]
    decision: str
    url: str
    text: str
    legacy: bool = False  # written before sentence windows


@dataclass
class _Paper:
    row: PaperRow
    content_hash: str
    chunks: list[tuple[str, str, int]]  # (chunk id, content hash, n_chunks)


def papers_from_chunks(chunks: Iterable[tuple[str, dict[str, Any], str | None]]) -> Iterator[_Paper]:
    """Whole papers from (chunk id, metadata, document) triples: a paper's documents in chunk order
    are its abstract. When the store holds two versions of a paper (an interrupted rewrite), the
    complete one (else the larger) gives the text."""
    grouped: dict[str, list[tuple[str, dict[str, Any], str | None]]] = defaultdict(list)
    for cid, meta, doc in chunks:
        grouped[str(meta.get("paper_id"))].append((cid, meta, doc))
    for pid, parts in grouped.items():
        versions: dict[str, list[tuple[str, dict[str, Any], str | None]]] = defaultdict(list)
        for part in parts:
            versions[str(part[1].get("content_hash"))].append(part)

        def rank(v: list[tuple[str, dict[str, Any], str | None]]) -> tuple[bool, int]:
            return (len(v) == int(v[0][1].get("n_chunks", 0) or 0), len(v))

        best = max(versions.values(), key=rank)
        meta = best[0][1]
        legacy = any("kind" not in m for _, m, _ in best)
        docs = [d for _, d in sorted(((int(m.get("chunk_index", 0)), d or "") for _, m, d in best)) if d]
        row = PaperRow(
            paper_id=pid,
            title=str(meta.get("title", "")),
            authors=[a for a in str(meta.get("authors", "")).split("; ") if a],
            decision=str(meta.get("decision", "")),
            url=str(meta.get("url", "")),
            text=(" … " if legacy else " ").join(docs),
            legacy=legacy,
        )
        chunk_rows = [(cid, str(m.get("content_hash")), int(m.get("n_chunks", 0) or 0)) for cid, m, _ in parts]
        yield _Paper(row, str(meta.get("content_hash")), chunk_rows)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection within the block (it allocates only acyclic, kept objects)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class PaperTable:
    """The SQLite file of one collection's papers; safe to share across threads (a connection each)."""

    LOCK_TIMEOUT = 900.0  # a rebuild of 100,000 papers takes minutes; a writer waits for it

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.lock = ProcessLock(self.path.with_name(self.path.name + ".lock"))
        self._local = threading.local()
        with self.locked("creating it"):
            self._create()

    def locked(self, what: str) -> contextlib.AbstractContextManager[bool]:
        """Hold the table's lock (between processes and threads; reentrant) while `what` happens."""
        from rag.errors import StoreError

        def waiting(holder: str) -> None:
            logger.info("waiting for another process (pid %s) to finish with the paper table (%s)", holder, what)

        def busy(holder: str) -> Exception:
            return StoreError(f"the paper table {self.path.parent} stayed busy for {self.LOCK_TIMEOUT:g}s ({what})")

        return self.lock.hold(self.LOCK_TIMEOUT, waiting, busy)

    # -- connections and schema -----------------------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            # One connection per thread, and a server has ~150 worker threads: SQLite's default page
            # cache (2 MB a connection) made RSS grow with every thread that read the table; reads
            # here are point lookups the OS's file cache serves as well.
            db.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KB}")
            self._local.db = db
        return db

    @contextlib.contextmanager
    def _txn(self) -> Iterator[sqlite3.Connection]:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _create(self) -> None:
        db = self._db()
        meta = self._meta(db) if self._has(db, "meta") else {}
        if meta and (meta.get("schema") != SCHEMA or meta.get("tokenizer") != TOKENIZER):
            logger.info("paper table %s is from another version: starting it afresh", self.path)
            with self._txn() as tx:
                for name in ("meta", "papers", "chunks", "fts", "vocab", "words", "blobs"):
                    tx.execute(f"DROP TABLE IF EXISTS {name}")
        with self._txn() as tx:
            for sql in (
                "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
                "CREATE TABLE IF NOT EXISTS papers(rowid INTEGER PRIMARY KEY, paper_id TEXT UNIQUE NOT NULL, "
                "title TEXT, authors TEXT, decision TEXT, url TEXT, text TEXT, content_hash TEXT, legacy INTEGER, terms BLOB)",
                "CREATE TABLE IF NOT EXISTS chunks(chunk_id TEXT PRIMARY KEY, paper_id TEXT NOT NULL, "
                "content_hash TEXT, n_chunks INTEGER) WITHOUT ROWID",
                "CREATE INDEX IF NOT EXISTS chunks_paper ON chunks(paper_id)",
                "CREATE TABLE IF NOT EXISTS vocab(term TEXT PRIMARY KEY, id INTEGER UNIQUE NOT NULL)",
                "CREATE TABLE IF NOT EXISTS words(stem TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID",
                "CREATE TABLE IF NOT EXISTS blobs(name TEXT PRIMARY KEY, stamp TEXT NOT NULL, data BLOB)",
            ):
                tx.execute(sql)
            tx.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?), ('tokenizer', ?)", (SCHEMA, TOKENIZER))

    @staticmethod
    def _has(db: sqlite3.Connection, table: str) -> bool:
        return db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone() is not None

    @staticmethod
    def _meta(db: sqlite3.Connection) -> dict[str, str]:
        return dict(db.execute("SELECT key, value FROM meta").fetchall())

    # -- the stamp ------------------------------------------------------------------------------
    def stamp(self) -> TableStamp:
        meta = self._meta(self._db())
        return TableStamp(meta.get("collection", ""), meta.get("revision", ""), int(meta.get("chunks", -1)))

    @staticmethod
    def _set_stamp(tx: sqlite3.Connection, stamp: TableStamp) -> TableStamp:
        """Record the store stamp; the chunk count is the table's own (a write it did not see shows)."""
        chunks = tx.execute("SELECT count(*) FROM chunks").fetchone()[0]
        tx.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                       [("collection", stamp.collection), ("revision", stamp.revision), ("chunks", str(chunks))])
        return TableStamp(stamp.collection, stamp.revision, chunks)

    def mark(self, stamp: TableStamp) -> None:
        """The store changed in a way that moves no paper (e.g. its model record): the new stamp."""
        with self._txn() as tx:
            self._set_stamp(tx, stamp)

    # -- writes ---------------------------------------------------------------------------------
    def _put(self, tx: sqlite3.Connection, paper: _Paper) -> None:
        r = paper.row
        old = tx.execute("SELECT rowid, title, text FROM papers WHERE paper_id = ?", (r.paper_id,)).fetchone()
        values = (r.title, json.dumps(r.authors, ensure_ascii=False), r.decision, r.url, r.text, paper.content_hash,
                  int(r.legacy), self._terms_blob(tx, r))
        if old is None:
            tx.execute("INSERT INTO papers(paper_id, title, authors, decision, url, text, content_hash, legacy, terms)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", (r.paper_id, *values))
        else:
            tx.execute("UPDATE papers SET title=?, authors=?, decision=?, url=?, text=?, content_hash=?, legacy=?, "
                       "terms=? WHERE rowid=?", (*values, old[0]))
            self._count_words(tx, f"{old[1]} {old[2]}", -1)
        self._count_words(tx, f"{r.title} {r.text}", +1)
        tx.executemany("INSERT OR REPLACE INTO chunks VALUES (?, ?, ?, ?)",
                       [(cid, r.paper_id, h, n) for cid, h, n in paper.chunks])

    @staticmethod
    def _terms_blob(tx: sqlite3.Connection, r: PaperRow, vocab: dict[str, int] | None = None) -> bytes:
        """The paper's BM25 terms: int32 triples (term id, count in the title, count in the abstract),
        so that every paper's blobs joined are one (n, 3) array (new terms get the next ids; `vocab`,
        during a rebuild, collects them in memory)."""
        import numpy as np

        title, body = Counter(bm25_tokens(r.title)), Counter(bm25_tokens(r.text))
        terms = list(dict.fromkeys([*title, *body]))
        if vocab is None:
            known: dict[str, int] = {}
            for start in range(0, len(terms), 500):
                part = terms[start : start + 500]
                known.update(tx.execute(f"SELECT term, id FROM vocab WHERE term IN ({','.join('?' * len(part))})",
                                        part).fetchall())
            new = [t for t in terms if t not in known]
            if new:
                first = tx.execute("SELECT coalesce(max(id), -1) + 1 FROM vocab").fetchone()[0]
                known.update({t: first + i for i, t in enumerate(new)})
                tx.executemany("INSERT INTO vocab VALUES (?, ?)", [(t, known[t]) for t in new])
        else:
            for t in terms:
                if t not in vocab:
                    vocab[t] = len(vocab)
            known = vocab
        ids = [known[t] for t in terms]
        triples = [(i, title[t], body[t]) for i, t in zip(ids, terms)]
        return np.asarray(triples, dtype=np.int32).reshape(-1, 3).tobytes()

    def _count_words(self, tx: sqlite3.Connection, text: str, delta: int) -> None:
        stems = stem_set(text)
        if delta > 0:
            tx.executemany("INSERT INTO words VALUES (?, 1) ON CONFLICT(stem) DO UPDATE SET df = df + 1",
                           [(s,) for s in stems])
        else:
            tx.executemany("UPDATE words SET df = df - 1 WHERE stem = ?", [(s,) for s in stems])

    def _drop_papers(self, tx: sqlite3.Connection, paper_ids: Iterable[str]) -> None:
        for pid in paper_ids:
            old = tx.execute("SELECT rowid, title, text FROM papers WHERE paper_id = ?", (pid,)).fetchone()
            if old is None:
                continue
            tx.execute("DELETE FROM papers WHERE rowid = ?", (old[0],))
            self._count_words(tx, f"{old[1]} {old[2]}", -1)
        tx.execute("DELETE FROM words WHERE df <= 0")

    def write(self, chunks: Sequence[tuple[str, dict[str, Any], str | None]], stamp: TableStamp) -> TableStamp:
        """Whole papers were upserted into the store (every chunk of each): the same here."""
        papers = list(papers_from_chunks(chunks))
        with self._txn() as tx:
            for paper in papers:
                self._put(tx, paper)
            return self._set_stamp(tx, stamp)

    def delete_chunks(self, chunk_ids: Sequence[str], stamp: TableStamp) -> TableStamp:
        """Chunks left the store; a paper none of whose chunks remain leaves the table."""
        with self._txn() as tx:
            touched = set()
            for cid in chunk_ids:
                row = tx.execute("DELETE FROM chunks WHERE chunk_id = ? RETURNING paper_id", (cid,)).fetchone()
                if row is not None:
                    touched.add(row[0])
            gone = [p for p in touched if tx.execute("SELECT 1 FROM chunks WHERE paper_id = ? LIMIT 1", (p,)).fetchone()
                    is None]
            self._drop_papers(tx, gone)
            return self._set_stamp(tx, stamp)

    def rebuild(self, chunks: Iterable[tuple[str, dict[str, Any], str | None]], stamp: TableStamp) -> TableStamp:
        """The table afresh from a scan of every chunk of the store (one transaction: readers see the
        old table until it commits)."""
        t0 = time.perf_counter()
        seen = 0

        def counted() -> Iterator[tuple[str, dict[str, Any], str | None]]:
            nonlocal seen
            for item in chunks:
                seen += 1
                if seen % 50_000 == 0:
                    logger.info("paper table: %d chunks read", seen)
                yield item

        papers = list(papers_from_chunks(counted()))
        logger.info("paper table: %d chunks read in %.1fs; indexing %d papers", seen, time.perf_counter() - t0,
                    len(papers))
        with self._txn() as tx:
            for name in ("papers", "chunks", "vocab", "words", "blobs"):
                tx.execute(f"DELETE FROM {name}")
            df: Counter[str] = Counter()
            vocab: dict[str, int] = {}
            for i, paper in enumerate(papers, start=1):
                r = paper.row
                tx.execute(
                    "INSERT INTO papers(paper_id, title, authors, decision, url, text, content_hash, legacy, terms) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (r.paper_id, r.title, json.dumps(r.authors, ensure_ascii=False), r.decision, r.url, r.text,
                     paper.content_hash, int(r.legacy), self._terms_blob(tx, r, vocab)))
                tx.executemany("INSERT OR REPLACE INTO chunks VALUES (?, ?, ?, ?)",
                               [(cid, r.paper_id, h, n) for cid, h, n in paper.chunks])
                df.update(stem_set(f"{r.title} {r.text}"))
                if i % 10_000 == 0:
                    logger.info("paper table: %d / %d papers indexed", i, len(papers))
            tx.executemany("INSERT INTO words VALUES (?, ?)", df.items())
            tx.executemany("INSERT INTO vocab VALUES (?, ?)", vocab.items())
            done = self._set_stamp(tx, stamp)
        logger.info("paper table %s rebuilt: %d papers in %.1fs", self.path, len(papers), time.perf_counter() - t0)
        return done

    def remove_file(self) -> None:
        """The collection is gone: so is its table."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
        for suffix in ("", "-wal", "-shm", ".lock", ".lock.pid"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")

    # -- reads ----------------------------------------------------------------------------------
    def count(self) -> int:
        return int(self._db().execute("SELECT count(*) FROM papers").fetchone()[0])

    def paper_ids(self) -> list[str]:
        return [r[0] for r in self._db().execute("SELECT paper_id FROM papers ORDER BY rowid")]

    def chunk_rows(self) -> Iterator[tuple[str, str, str, int]]:
        """(chunk id, paper id, content hash, n_chunks) of every chunk in the store."""
        yield from self._db().execute("SELECT chunk_id, paper_id, content_hash, n_chunks FROM chunks")

    def chunk_ids(self, paper_ids: Sequence[str]) -> list[str] | None:
        """The chunk ids of these papers, or None when the table lacks one of them (a paper written
        by a process this table has not caught up with: ask the store by paper id instead)."""
        ids = list(dict.fromkeys(paper_ids))
        if not ids or not self.path.exists():
            return None
        marks = ",".join("?" * len(ids))
        rows = self._db().execute(
            f"SELECT chunk_id, paper_id FROM chunks WHERE paper_id IN ({marks})", ids
        ).fetchall()
        if {p for _, p in rows} != set(ids):
            return None
        return [c for c, _ in rows]

    def catalog_rows(self) -> Iterator[tuple[str, str, list[str], str]]:
        for pid, title, authors, decision in self._db().execute(
            "SELECT paper_id, title, authors, decision FROM papers ORDER BY rowid"
        ):
            yield pid, title, json.loads(authors), decision

    @staticmethod
    def _row(r: Sequence[Any]) -> PaperRow:
        return PaperRow(r[0], r[1], json.loads(r[2]), r[3], r[4], r[5], bool(r[6]))

    def rows(self, paper_ids: Sequence[str]) -> dict[str, PaperRow]:
        """paper id → row, for the ids the table holds."""
        out: dict[str, PaperRow] = {}
        ids = list(dict.fromkeys(paper_ids))
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            sql = ("SELECT paper_id, title, authors, decision, url, text, legacy FROM papers WHERE paper_id IN "
                   f"({','.join('?' * len(part))})")
            for r in self._db().execute(sql, part):
                out[r[0]] = self._row(r)
        return out

    def find_id(self, title: str, url: str = "") -> str | None:
        """The id of the paper with this link, else with exactly this title (None: no such paper)."""
        db = self._db()
        if url:
            hit = db.execute("SELECT paper_id FROM papers WHERE url = ? LIMIT 1", (url,)).fetchone()
            if hit:
                return str(hit[0])
        hit = db.execute("SELECT paper_id FROM papers WHERE title = ? LIMIT 1", (title.strip(),)).fetchone()
        return str(hit[0]) if hit else None

    def all_rows(self) -> Iterator[PaperRow]:
        for r in self._db().execute("SELECT paper_id, title, authors, decision, url, text, legacy FROM papers "
                                    "ORDER BY rowid"):
            yield self._row(r)

    def word_stats(self) -> tuple[int, Counter[str]]:
        """(papers, stem → papers whose title + abstract has it)."""
        db = self._db()
        n = db.execute("SELECT count(*) FROM papers").fetchone()[0]
        return int(n), Counter(dict(db.execute("SELECT stem, df FROM words")))

    def term_ids(self, terms: Sequence[str]) -> dict[str, int]:
        """term → id for the terms some paper has."""
        out: dict[str, int] = {}
        terms = list(dict.fromkeys(terms))
        for start in range(0, len(terms), 500):
            part = terms[start : start + 500]
            out.update(self._db().execute(f"SELECT term, id FROM vocab WHERE term IN ({','.join('?' * len(part))})",
                                          part).fetchall())
        return out

    def bm25_rows(self) -> Iterator[tuple[str, str, bytes]]:
        """(paper id, decision, terms blob) of every paper, in table order (see `_terms_blob`)."""
        yield from self._db().execute("SELECT paper_id, decision, terms FROM papers ORDER BY rowid")

    # -- the cached catalog ---------------------------------------------------------------------
    def cached(self, name: str, stamp: TableStamp) -> Any:
        """An object stored for exactly this stamp (this process's own pickle: the table is a file of
        the store, trusted as the store is), or None."""
        row = self._db().execute("SELECT stamp, data FROM blobs WHERE name = ?", (name,)).fetchone()
        if row is None or row[0] != json.dumps(list(stamp)):
            return None
        try:
            with _gc_paused():  # the catalog is ~10^6 small objects: the collector halves the load rate
                return pickle.loads(row[1])  # noqa: S301 - written by this module into the store's own file
        except Exception:  # a damaged blob is rebuilt
            return None

    def cache(self, name: str, stamp: TableStamp, value: Any) -> None:
        """Store an object for this stamp, unless the table moved on meanwhile (objects of older
        stamps go: one of each name is kept)."""
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            with self._txn() as tx:
                if TableStamp(*self._stamp_in(tx)) == stamp:
                    tx.execute("INSERT OR REPLACE INTO blobs VALUES (?, ?, ?)", (name, json.dumps(list(stamp)), data))
        except sqlite3.Error as exc:  # a read-only store: the next process builds it again
            logger.info("could not cache %s in the paper table: %s", name, exc)

    def _stamp_in(self, tx: sqlite3.Connection) -> tuple[str, str, int]:
        meta = self._meta(tx)
        return meta.get("collection", ""), meta.get("revision", ""), int(meta.get("chunks", -1))
