"""Papers for a question: query understanding, dense (Chroma) and BM25 rankings of papers, fusion.

Dense: a paper's score is the mean of its two best chunk cosines (title chunk and sentence windows,
see rag.text.chunking). BM25: one document per paper, title counted three times. Hybrid: reciprocal-rank
fusion of the two, then one round of dense pseudo-relevance feedback (the query vector moves toward
the top fused papers, Rocchio) and fusion again. Measured on the dev sets in docs/measured.md ("Retrieval").
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding

from rag.errors import EmptyStoreError, InvalidRequestError
from rag.retrieval.lexical import PaperIndex
from rag.settings import DECISIONS, RETRIEVER_MODES, RetrievalSettings, SearchOptions
from rag.store.chroma import PaperStore, Stamp
from rag.store.vectors import unit
from rag.text.query import QueryIntent, is_question, parse
from rag.text.reading import without_aside
from rag.text.terms import TermStats
from rag.types import Source

logger = logging.getLogger(__name__)


@dataclass
class Retrieval:
    """Papers found for a query, best first, with the best dense similarity for refusal."""

    query: str
    mode: str
    sources: list[Source]
    best_dense: float | None
    intent: QueryIntent | None = None
    notes: list[str] = field(default_factory=list)  # e.g. what the LLM reranker did
    shown_k: int = 0  # papers an answer shows; `sources` may hold a deeper pool of candidates
    anchor: Source | None = None  # "similar to X": the paper X (number 0), not one of the sources

    def arranged(self, numbers: Sequence[int], keep: int) -> tuple[Retrieval, dict[int, int]]:
        """The sources with `numbers` first (in that order) and the rest in rank order, cut to `keep`
        (never below len(numbers)), renumbered from 1; and the old → new number map."""
        by_number = {s.number: s for s in self.sources}
        order = list(dict.fromkeys([n for n in numbers if n in by_number] + [s.number for s in self.sources]))
        order = order[: max(keep, len(set(numbers)))]
        renumber = {old: new for new, old in enumerate(order, start=1)}
        sources = [by_number[old].model_copy(update={"number": new}) for old, new in renumber.items()]
        return replace(self, sources=sources), renumber


def check_decisions(decisions: Sequence[str] | None) -> None:
    """Reject a decision filter value that is not Oral, Spotlight or Poster (the store filters by it)."""
    bad = [d for d in decisions or () if d not in DECISIONS]
    if bad:
        raise InvalidRequestError(f"unknown decision {bad[0]!r}; use one of {', '.join(DECISIONS)}")


@dataclass
class DenseHits:
    """Paper scores from one dense query: paper id → (score, best chunk cosine), best first."""

    scores: dict[str, tuple[float, float]]

    def ranking(self) -> list[str]:
        return sorted(self.scores, key=lambda p: -self.scores[p][0])

    @property
    def best(self) -> float | None:
        order = self.ranking()
        return self.scores[order[0]][1] if order else None


def aggregate_chunks(pairs: Sequence[tuple[str, float]]) -> DenseHits:
    """(paper id, chunk cosine) pairs, best first → per paper the mean of its two best cosines.

    A paper with one chunk in the list gets the list's last cosine as its second (the most its
    unseen chunks can score)."""
    floor = pairs[-1][1] if pairs else 0.0
    top: dict[str, list[float]] = {}
    for pid, cos in pairs:
        got = top.setdefault(pid, [])
        if len(got) < 2:
            got.append(cos)
    return DenseHits({pid: ((c[0] + (c[1] if len(c) > 1 else floor)) / 2, c[0]) for pid, c in top.items()})


def rrf(rankings: Sequence[Sequence[str]], k: int) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion of paper-id rankings, best first; ties (rank a in one list and b in the
    other, against b and a) go to the order of the first ranking."""
    scores: dict[str, float] = {}
    first = {pid: i for i, pid in enumerate(rankings[0])} if rankings else {}
    for ranking in rankings:
        for rank, pid in enumerate(ranking, start=1):
            scores[pid] = scores.get(pid, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-round(kv[1], 12), first.get(kv[0], len(first))))


class PaperRetriever:
    """Retrieves papers from one PaperStore with the configured mode; safe to share across threads."""

    def __init__(
        self,
        store: PaperStore,
        embed_model: BaseEmbedding,
        cfg: RetrievalSettings,
        reranker: Any = None,
        on_change: Callable[[], None] | None = None,
    ):
        self.store = store
        self.reranker = reranker
        self.embed_model = embed_model
        self.cfg = cfg
        self.on_change = on_change  # called when the store changed since the last query
        self._papers: PaperIndex | None = None
        self._previous: PaperIndex | None = None  # its catalog serves while a large store's is rebuilt
        self._adapted: bool | None = None  # whether the store's vectors come from `rag adapt`
        self._chunks = 0  # chunks in the store at the last query (caps a dense query's size)
        self._stamp: Stamp | None = None  # the store as the last query saw it
        self._lock = threading.Lock()

    def invalidate(self) -> None:
        """Forget the paper table, BM25 index and word statistics after the store changed."""
        with self._lock:
            self._previous = self._papers or self._previous
            self._papers = None
            self._adapted = None

    def refresh(self) -> int:
        """Look at the store (once per query): when it changed since the last query, in this process
        or another, forget the paper table and BM25 index and call `on_change`. The store reopens
        itself when another process's write made its vector index stale. Returns the chunk count."""
        stamp = self.store.sync()
        with self._lock:
            previous, self._stamp = self._stamp, stamp
            if stamp != previous:
                self._previous = self._papers or self._previous
                self._papers = None
                self._adapted = None
        if previous is not None and stamp != previous:
            logger.info("the store changed (revision %s, %d chunks): paper index dropped", stamp.revision or "-",
                        stamp.chunks)
            if self.on_change is not None:
                self.on_change()
        return stamp.chunks

    def feedback_weight(self) -> float:
        """The configured feedback weight; unset: 0.5, or 0 when an adapted model wrote the store."""
        if self.cfg.feedback_weight is not None:
            return self.cfg.feedback_weight
        if self._adapted is None:
            record = self.store.model_record()
            self._adapted = record is not None and record.name == "adapted"
        return 0.0 if self._adapted else 0.5

    def papers(self) -> PaperIndex:
        """The stored papers: rows, BM25 and word statistics from the store's paper table, and the
        author/title catalog (opened once per store change; no scan of the store)."""
        with self._lock:
            if self._papers is None:
                self._papers = PaperIndex.open(self.store, self.cfg, previous=self._previous)
                self._previous = None
            return self._papers

    def term_stats(self) -> TermStats:
        """Document frequencies of words over the stored papers (title + abstract per paper)."""
        return self.papers().term_stats()

    def first_for(self, phrases: Sequence[str], decisions: Sequence[str] | None = None) -> dict[str, str]:
        """The paper the search ranks first for each phrase on its own (an example a question gives:
        "spike-aware resets"), in the configured mode, without the feedback query (which would double the
        time of each); a phrase that finds nothing is left out. Each phrase names another kind of paper: one
        whose first paper an earlier phrase has taken gets its second ("decoding across cell-type
        populations" and "circuit models built from many neuronal subtypes" both rank the decoding paper first)."""
        if not phrases:
            return {}
        vectors = self.embed_model.get_text_embedding_batch(list(phrases))
        out: dict[str, str] = {}
        for phrase, vector in zip(phrases, vectors):
            ranked, _ = self._rank(phrase, np.asarray(vector, dtype=np.float32), 2, decisions, self.cfg.mode,
                                   feedback=False)
            free = [p for p, _ in ranked[:2] if p not in out.values()]
            if free:
                out[phrase] = free[0]
        return out

    def understand(self, question: str) -> QueryIntent:
        """What the question asks of the catalog: authors, decisions, a named paper, similar-to, list."""
        return parse(question, self.papers().catalog)

    # -- dense --------------------------------------------------------------------------------
    def _dense(self, vector: Sequence[float] | np.ndarray, n_chunks: int, decisions: Sequence[str] | None) -> DenseHits:
        total = self._chunks if self._chunks else None
        return aggregate_chunks(self.store.nearest_chunks(vector, n_chunks, decisions, total))

    def _feedback_vector(self, query_vec: np.ndarray, top: Sequence[str]) -> np.ndarray:
        """Rocchio: the query moved toward the mean of the top papers' vectors."""
        papers = self.store.paper_vectors(top)
        if not papers:
            return query_vec
        centroid = np.mean([papers[p] for p in top if p in papers], axis=0)
        moved = query_vec + self.feedback_weight() * centroid
        return unit(moved)

    # -- the ranking ---------------------------------------------------------------------------
    def _rank(
        self, text: str, vector: np.ndarray, depth: int, decisions: Sequence[str] | None, mode: str,
        feedback: bool = True,
    ) -> tuple[list[tuple[str, float]], DenseHits]:
        """(paper id, score) best first, and the dense hits (always run: refusal uses their cosine).
        `feedback`: a hybrid search also runs its feedback query, when one is configured."""
        n_chunks = max(self.cfg.dense_chunks, depth * self.cfg.chunks_per_paper)
        dense = self._dense(vector, n_chunks, decisions)
        if mode == "dense":
            return [(p, dense.scores[p][0]) for p in dense.ranking()], dense
        bm25 = self.papers().bm25(text, max(depth, self.cfg.dense_chunks // 2), decisions)
        if mode == "bm25":
            return bm25, dense
        # BM25 first: it breaks ties, being the stronger single ranking on both dev sets.
        fused = rrf([[p for p, _ in bm25], dense.ranking()], self.cfg.rrf_k)
        if feedback and self.feedback_weight() > 0 and self.cfg.feedback_papers > 0 and fused:
            moved = self._feedback_vector(vector, [p for p, _ in fused[: self.cfg.feedback_papers]])
            second = self._dense(moved, n_chunks, decisions)
            fused = rrf([[p for p, _ in bm25], second.ranking()], self.cfg.rrf_k)
        return fused, dense

    def retrieve(self, query: str, options: SearchOptions | None = None, pool: int | None = None) -> Retrieval:
        """The papers for a question asked with `options` (top_k, decisions, retriever), best first,
        with the intent that shaped the list.

        `pool`: for a topic question, read this many candidates (an answer counts every one that meets
        the question and shows `shown_k` of them)."""
        options = options or {}
        top_k, decisions = options.get("top_k"), options.get("decisions")
        mode = options.get("retriever") or self.cfg.mode
        if mode not in RETRIEVER_MODES:
            raise InvalidRequestError(f"unknown retriever {mode!r}; use dense, bm25 or hybrid")
        check_decisions(decisions)  # before any work
        self._chunks = self.refresh()
        if self._chunks == 0:
            raise EmptyStoreError("the store holds no papers; run `rag ingest` first")
        papers = self.papers()
        intent = parse(query, papers.catalog) if self.cfg.understand else None
        if intent is not None and not decisions and intent.decisions:
            decisions = intent.decisions
        allowed = set(decisions) if decisions else None
        k = top_k or (self.cfg.list_top_k if intent is not None and intent.list_question else self.cfg.top_k)
        shown_k, pooled = k, bool(pool) and (intent is None or intent.kind in ("topic", "single"))
        if pooled:
            k = max(k, pool or 0)

        text = (intent.search_text if intent is not None else "") or query
        if is_question(query):  # (a description keeps its contrasts: "uses X rather than Y")
            text = without_aside(text)
        anchor = intent.similar_to if intent is not None else None
        anchor_vec = self.store.paper_vectors([anchor]).get(anchor) if anchor else None
        if anchor and anchor_vec is not None:
            vector = np.asarray(anchor_vec, dtype=np.float32)
            text = papers.title(anchor) + " " + papers.text(anchor)
        else:
            vector = np.asarray(self.embed_model.get_query_embedding(text), dtype=np.float32)
        depth = k + 1 if anchor else k
        if intent is not None and intent.kind == "author":
            depth = max(depth, len(intent.author_paper_ids))
        ranked, dense = self._rank(text, vector, depth, decisions, mode)

        first: list[str] = []
        if intent is not None and intent.kind == "author":
            # All of the author's papers and only theirs, the ones closest to any topic words first.
            own = [p for p in intent.author_paper_ids if allowed is None or papers.decision(p) in allowed]
            pos = {p: i for i, (p, _) in enumerate(ranked)}
            ranked = [(p, 0.0) for p in sorted(own, key=lambda p: pos.get(p, len(pos)))]
            k = max(k, len(ranked)) if not top_k else k
        elif intent is not None and intent.named_ids:
            first = [p for p in intent.named_ids if allowed is None or papers.decision(p) in allowed]
        if anchor:  # its neighbours, not the paper itself
            ranked = [(p, s) for p, s in ranked if p != anchor]
            first = [p for p in first if p != anchor]
        score = dict(ranked)
        order = list(dict.fromkeys(first + [p for p, _ in ranked]))
        notes: list[str] = []
        if self.reranker is not None and (intent is None or intent.kind in ("topic", "single", "named")):
            depth_r = self.cfg.rerank_depth
            head = order[:depth_r]
            done = self.reranker(text, head, [(papers.title(p), papers.text(p)) for p in head])
            # A paper the question names stays first; the LLM orders the rest.
            named = [p for p in first if p in head]
            order = list(dict.fromkeys(named + done.order)) + order[depth_r:]
            if done.note:
                notes.append(done.note)
        # A paper removed since the dense or BM25 ranking was read is left out.
        rows = papers.rows(order)
        order = [p for p in order if p in rows][:k]
        sources = [
            papers.source_of(number, rows[pid], score.get(pid, 0.0), dense.scores.get(pid, (0.0, None))[1])
            for number, pid in enumerate(order, start=1)
        ]
        if intent is not None and notes:
            intent = intent.model_copy(update={"notes": intent.notes + notes})
        anchor_row = papers.rows([anchor]).get(anchor) if anchor and anchor_vec is not None else None
        return Retrieval(
            query=query, mode=mode, sources=sources, best_dense=dense.best, intent=intent, notes=notes,
            shown_k=min(shown_k, len(sources)) if pooled else len(sources),
            anchor=papers.source_of(0, anchor_row, 1.0, None) if anchor_row is not None else None,
        )
