"""The stored papers as retrieval reads them: rows, BM25 and word statistics from the paper table
(rag.store.papertable, kept current by every write), and the query catalog built from it.

BM25 scores one document per paper (the title counted `bm25_title_boost` times, then the abstract),
so a long abstract split into several windows is still one paper to BM25. The scoring is bm25s'
(Lucene idf, k1, b; the same tokens), computed in memory from the table's per-paper term counts:
term-major postings in numpy arrays, built when a process first needs them (~1 s per 50,000 papers)
and again after the store changed. Opening a PaperIndex reads no chunk of the store: the table is
current, or rebuilt once (PaperStore.current_table).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Any, Sequence

import numpy as np

from rag.errors import EmptyStoreError, StoreError
from rag.ingest.corpus import Paper
from rag.settings import RetrievalSettings
from rag.store.chroma import PaperStore
from rag.store.papertable import PaperRow, PaperTable, TableStamp
from rag.text.query import Catalog
from rag.text.terms import PhraseStats, TermStats, bm25_tokens
from rag.types import Source

logger = logging.getLogger(__name__)

PaperRecord = PaperRow  # the name this module's rows had before the paper table
# Above this many papers a changed store keeps answering with the previous catalog while the new one
# is built in the background (a 100,000-paper catalog takes ~10-20 s to build, ~2 s to load).
BACKGROUND_CATALOG = 20_000
# The cached catalog's name carries the version of its build rules: a catalog an older build made
# is built again, not reused.
CATALOG_BLOB = f"catalog-{Catalog.VERSION}"


class Bm25Index:
    """BM25 over papers in memory: postings (paper, term frequency) grouped by term id."""

    def __init__(self, rows: Any, boost: int, k1: float, b: float):
        ids: list[str] = []
        decisions: list[str] = []
        blobs: list[bytes] = []
        counts: list[int] = []  # terms per paper
        for pid, decision, blob in rows:
            ids.append(pid)
            decisions.append(decision)
            blobs.append(blob or b"")
            counts.append(len(blob or b"") // 12)
        self.ids = ids
        self.n = len(ids)
        self.decisions = np.asarray(decisions, dtype=str)
        self._masks: dict[tuple[str, ...], np.ndarray] = {}
        triples = np.frombuffer(b"".join(blobs), dtype=np.int32).reshape(-1, 3)  # (term, title tf, abstract tf)
        del blobs
        if not self.n or not len(triples):
            self.indptr = np.zeros(1, dtype=np.int64)
            self.doc = np.zeros(0, dtype=np.int32)
            self.tfc = np.zeros(0, dtype=np.float32)
            return
        term = triples[:, 0]
        tf = boost * triples[:, 1].astype(np.float32) + triples[:, 2].astype(np.float32)
        doc = np.repeat(np.arange(self.n, dtype=np.int32), counts)
        doc_len = np.bincount(doc, weights=tf, minlength=self.n).astype(np.float32)
        avg = float(doc_len.mean()) or 1.0
        tfc = tf / (k1 * ((1 - b) + b * doc_len[doc] / avg) + tf)  # bm25s' Robertson/Lucene tf part
        # Postings grouped by term, papers in order within a term: a stable sort as two 16-bit radix
        # passes (numpy's stable sort of uint16 is a radix sort: 3-4x faster than sorting int32).
        low = np.argsort((term & 0xFFFF).astype(np.uint16), kind="stable")
        order = low[np.argsort((term[low] >> 16).astype(np.uint16), kind="stable")]
        self.doc = doc[order]
        self.tfc = tfc[order].astype(np.float32)
        vocab = int(term.max()) + 1 if len(term) else 0
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(term, minlength=vocab))]).astype(np.int64)

    def scores(self, term_ids: Sequence[int]) -> np.ndarray:
        """Every paper's BM25 score for the query terms (a repeated term counts again, as in bm25s)."""
        out = np.zeros(self.n, dtype=np.float32)
        for t in term_ids:
            if t + 1 >= len(self.indptr):
                continue  # a term written after this index was built
            s, e = int(self.indptr[t]), int(self.indptr[t + 1])
            if s == e:
                continue
            idf = math.log(1 + (self.n - (e - s) + 0.5) / ((e - s) + 0.5))
            out += np.bincount(self.doc[s:e], weights=self.tfc[s:e] * idf, minlength=self.n).astype(np.float32)
        return out

    def top(self, term_ids: Sequence[int], k: int, decisions: Sequence[str] | None) -> list[tuple[str, float]]:
        scores = self.scores(term_ids)
        if decisions:
            key = tuple(sorted(decisions))
            mask = self._masks.get(key)
            if mask is None:
                mask = self._masks[key] = ~np.isin(self.decisions, list(key))
            scores[mask] = 0.0
        k = min(k, int(np.count_nonzero(scores > 0)))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]  # best first; ties in table order
        return [(self.ids[i], float(scores[i])) for i in top]


class PaperIndex:
    """Every stored paper: lookups by id, BM25 over papers, word statistics, the query catalog."""

    def __init__(
        self, table: PaperTable, stamp: TableStamp, cfg: RetrievalSettings, previous: PaperIndex | None = None
    ):
        self.table = table
        self.stamp = stamp
        self.cfg = cfg
        self._n = table.count()
        if not self._n:
            raise EmptyStoreError("the store holds no papers; run `rag ingest` first")
        self._lock = threading.Lock()
        self._catalog: Catalog | None = None
        self._fallback = previous._catalog if previous is not None and self._n > BACKGROUND_CATALOG else None
        self._building = False
        self._terms: TermStats | None = None
        self._records: list[PaperRow] | None = None
        self._bm25: Bm25Index | None = None

    @classmethod
    def open(cls, store: PaperStore, cfg: RetrievalSettings, previous: PaperIndex | None = None) -> PaperIndex:
        """The index of the store as it is now (its paper table, rebuilt first if it is not current)."""
        table = store.current_table()
        index = cls(table, table.stamp(), cfg, previous)
        legacy = index.table._db().execute("SELECT count(*) FROM papers WHERE legacy").fetchone()[0]
        if legacy:
            logger.warning(
                "%d papers were written by an older version (one vector per abstract head); run "
                "`rag ingest` again to re-embed them with sentence windows",
                legacy,
            )
        return index

    from_store = open  # the name before the paper table

    def __len__(self) -> int:
        return self._n

    def __contains__(self, pid: object) -> bool:
        return isinstance(pid, str) and bool(self.table.rows([pid]))

    # -- the catalog ------------------------------------------------------------------------------
    @property
    def catalog(self) -> Catalog:
        """The query catalog of this stamp: cached in the table, else built (and cached). A large
        store that just changed answers with the previous catalog until the new one is built."""
        with self._lock:
            if self._catalog is not None:
                return self._catalog
            cached = self.table.cached(CATALOG_BLOB, self.stamp)
            if isinstance(cached, Catalog):
                self._catalog = cached
                return cached
            if self._fallback is not None:
                if not self._building:
                    self._building = True
                    threading.Thread(target=self._build_catalog, name="catalog", daemon=True).start()
                return self._fallback
            self._catalog = self._build_catalog_now()
            return self._catalog

    def _build_catalog_now(self) -> Catalog:
        t0 = time.perf_counter()
        catalog = Catalog.build(self.table.catalog_rows())
        logger.info("query catalog of %d papers built in %.1fs", len(catalog), time.perf_counter() - t0)
        self.table.cache(CATALOG_BLOB, self.stamp, catalog)
        return catalog

    def _build_catalog(self) -> None:
        try:
            catalog = self._build_catalog_now()
        except Exception:  # the previous catalog stays; the next index tries again
            logger.exception("building the query catalog failed")
            return
        with self._lock:
            self._catalog, self._fallback = catalog, None

    # -- rows ---------------------------------------------------------------------------------------
    def rows(self, paper_ids: Sequence[str]) -> dict[str, PaperRow]:
        """paper id → row for the ids the store holds now (one query)."""
        return self.table.rows(paper_ids)

    def _row(self, pid: str) -> PaperRow:
        row = self.table.rows([pid]).get(pid)
        if row is None:
            raise KeyError(pid)
        return row

    @property
    def records(self) -> list[PaperRow]:
        """Every paper, in the order they were first written (reads the whole table: small stores)."""
        if self._records is None:
            self._records = list(self.table.all_rows())
        return self._records

    def to_papers(self) -> list[Paper]:
        """The stored papers as ingest takes them (to re-embed a store from itself)."""
        rows = list(self.table.all_rows())
        legacy = [r.paper_id for r in rows if r.legacy]
        if legacy:
            raise StoreError(
                f"{len(legacy)} papers were written by an older version (e.g. {legacy[0]}); run "
                "`rag ingest` with their corpus files first"
            )
        return [
            Paper(id=r.paper_id, title=r.title, abstract=r.text, authors=tuple(r.authors), decision=r.decision, url=r.url)
            for r in rows
        ]

    def title(self, pid: str) -> str:
        return self._row(pid).title

    def text(self, pid: str) -> str:
        return self._row(pid).text

    def decision(self, pid: str) -> str:
        row = self.table.rows([pid]).get(pid)
        return row.decision if row is not None else ""

    @staticmethod
    def source_of(number: int, row: PaperRow, score: float, dense: float | None) -> Source:
        return Source(
            number=number,
            paper_id=row.paper_id,
            title=row.title,
            url=row.url,
            decision=row.decision,
            authors=list(row.authors),
            text=row.text,
            score=round(float(score), 6),
            dense_score=dense,
        )

    def source(self, number: int, pid: str, score: float, dense: float | None) -> Source:
        return self.source_of(number, self._row(pid), score, dense)

    def term_stats(self) -> TermStats:
        """Document frequencies of word stems over the stored papers (kept in the table), and the
        two-word terms the papers write (computed once per table stamp and kept in the table)."""
        if self._terms is None:
            n, df = self.table.word_stats()
            self._terms = TermStats(n_docs=n, df=df, phrases=self._phrase_stats())
        return self._terms

    def _phrase_stats(self) -> PhraseStats:
        t0 = time.perf_counter()
        name = f"phrases/{PhraseStats.MIN_PAPERS}"
        cached = self.table.cached(name, self.stamp)
        if isinstance(cached, PhraseStats):
            return cached
        stats = PhraseStats.from_texts(f"{r.title}. {r.text}" for r in self.table.all_rows())
        if self._n >= 500:  # ~0.5 s a thousand papers: worth keeping for the next process
            self.table.cache(name, self.stamp, stats)
        logger.info("two-word terms of %d papers in %.2fs: %d", self._n, time.perf_counter() - t0, len(stats.pairs))
        return stats

    # -- BM25 ---------------------------------------------------------------------------------
    def bm25(self, text: str, k: int, decisions: Sequence[str] | None) -> list[tuple[str, float]]:
        """(paper id, BM25 score) best first; papers sharing no word with the text are left out."""
        with self._lock:
            if self._bm25 is None:
                t0 = time.perf_counter()
                name = f"bm25/{self.cfg.bm25_title_boost}/{self.cfg.bm25_k1}/{self.cfg.bm25_b}"
                cached = self.table.cached(name, self.stamp)
                if isinstance(cached, Bm25Index):
                    self._bm25 = cached
                else:
                    self._bm25 = Bm25Index(self.table.bm25_rows(), self.cfg.bm25_title_boost, self.cfg.bm25_k1,
                                           self.cfg.bm25_b)
                    if self._bm25.n > BACKGROUND_CATALOG // 4:  # worth keeping for the next process
                        self.table.cache(name, self.stamp, self._bm25)
                logger.info("BM25 index over %d papers in %.2fs%s", self._bm25.n, time.perf_counter() - t0,
                            " (cached)" if cached is not None else "")
        known = self.table.term_ids(bm25_tokens(text))
        term_ids = [known[t] for t in bm25_tokens(text) if t in known]
        return self._bm25.top(term_ids, k, decisions)
