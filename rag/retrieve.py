"""Dense (Chroma), BM25 and hybrid retrieval of papers; chunks of one paper count once."""

from __future__ import annotations

import copy
import logging
import math
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters
from llama_index.core.vector_stores.utils import metadata_dict_to_node

from .errors import EmptyStoreError, InvalidRequestError
from .settings import DECISIONS, RetrievalSettings, RetrieverMode
from .store import PaperStore
from .terms import TermStats
from .types import Source

logger = logging.getLogger(__name__)


@dataclass
class Retrieval:
    """Papers found for a query, best first, with the best dense similarity for refusal."""

    query: str
    mode: str
    sources: list[Source]
    best_dense: float | None


def decision_filters(decisions: Sequence[str] | None) -> MetadataFilters | None:
    """A store-side filter on the paper's decision (Oral/Spotlight/Poster)."""
    if not decisions:
        return None
    bad = [d for d in decisions if d not in DECISIONS]
    if bad:
        raise InvalidRequestError(f"unknown decision {bad[0]!r}; use one of {', '.join(DECISIONS)}")
    return MetadataFilters(
        filters=[MetadataFilter(key="decision", value=list(decisions), operator=FilterOperator.IN)]
    )


def cosine_from_chroma(score: float | None) -> float | None:
    """ChromaVectorStore reports exp(-distance); with cosine space that is exp(cos - 1)."""
    if score is None or score <= 0:
        return None
    return 1.0 + math.log(score)


@dataclass
class _PaperHit:
    node: TextNode
    score: float
    dense: float | None
    chunks: list[str]


def _group(nodes: Iterable[NodeWithScore], dense: bool) -> list[_PaperHit]:
    """Chunk hits → paper hits in rank order; a paper's score is its best chunk's."""
    papers: dict[str, _PaperHit] = {}
    for nws in nodes:
        meta = nws.node.metadata
        pid = str(meta.get("paper_id"))
        score = float(nws.score or 0.0)
        text = nws.node.get_content()
        hit = papers.get(pid)
        if hit is None:
            papers[pid] = _PaperHit(
                node=nws.node,  # type: ignore[arg-type]
                score=score,
                dense=cosine_from_chroma(score) if dense else None,
                chunks=[text],
            )
        elif text not in hit.chunks:
            hit.chunks.append(text)
    return list(papers.values())


def _ordered_text(node: TextNode, chunks: list[str]) -> str:
    if len(chunks) == 1 or int(node.metadata.get("n_chunks", 1)) == 1:
        return chunks[0]
    return " … ".join(chunks)


class PaperRetriever:
    """Retrieves papers from one PaperStore with the configured mode; safe to share across threads."""

    def __init__(self, store: PaperStore, embed_model: BaseEmbedding, cfg: RetrievalSettings):
        self.store = store
        self.embed_model = embed_model
        self.cfg = cfg
        self._index = VectorStoreIndex.from_vector_store(store.vector_store(), embed_model=embed_model)
        self._bm25: Any = None
        self._bm25_meta: list[dict[str, Any]] = []
        self._terms: TermStats | None = None
        self._lock = threading.Lock()

    def invalidate(self) -> None:
        """Forget the BM25 index and the word statistics after the store changed."""
        with self._lock:
            self._bm25 = None
            self._terms = None

    def term_stats(self) -> TermStats:
        """Document frequencies of words over the stored papers (title + abstract per paper)."""
        with self._lock:
            if self._terms is None:
                papers: dict[str, list[str]] = {}
                for _, meta, doc in self.store.iter_records(["metadatas", "documents"]):
                    parts = papers.setdefault(str(meta.get("paper_id")), [str(meta.get("title", ""))])
                    parts.append(doc or "")
                self._terms = TermStats.from_texts(" ".join(p) for p in papers.values())
            return self._terms

    def _bm25_base(self) -> Any:
        with self._lock:
            if self._bm25 is None:
                from llama_index.retrievers.bm25 import BM25Retriever

                logging.getLogger("bm25s").setLevel(logging.WARNING)  # it sets DEBUG on import

                nodes = []
                for cid, meta, doc in self.store.iter_records(["metadatas", "documents"]):
                    node = metadata_dict_to_node(meta, text=doc)
                    node.id_ = cid
                    nodes.append(node)
                if not nodes:
                    raise EmptyStoreError("the store holds no papers; run `rag ingest` first")
                logger.info("building BM25 index over %d chunks", len(nodes))
                self._bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=10)
                self._bm25_meta = [dict(c) for c in self._bm25.corpus]
            return self._bm25

    def _bm25_retrieve(self, query: str, k: int, decisions: Sequence[str] | None) -> list[NodeWithScore]:
        base = self._bm25_base()
        r = copy.copy(base)  # per-query top-k and mask without touching the shared index
        r.similarity_top_k = min(k, len(self._bm25_meta))
        if decisions:
            mask = [int(m.get("decision") in decisions) for m in self._bm25_meta]
            if not any(mask):
                return []
            r.similarity_top_k = min(r.similarity_top_k, sum(mask))
            r.corpus_weight_mask = mask
        hits = r.retrieve(QueryBundle(query))
        return [h for h in hits if (h.score or 0) > 0]

    def _dense_retrieve(self, query: str, k: int, decisions: Sequence[str] | None) -> list[NodeWithScore]:
        retriever = self._index.as_retriever(similarity_top_k=k, filters=decision_filters(decisions))
        return retriever.retrieve(QueryBundle(query))

    def retrieve(
        self,
        query: str,
        top_k: int | None = None,
        decisions: Sequence[str] | None = None,
        mode: RetrieverMode | None = None,
    ) -> Retrieval:
        """The top-k papers for a query; fusion happens on paper rankings (RRF)."""
        mode = mode or self.cfg.mode
        if mode not in ("dense", "bm25", "hybrid"):
            raise InvalidRequestError(f"unknown retriever {mode!r}; use dense, bm25 or hybrid")
        top_k = top_k or self.cfg.top_k
        decision_filters(decisions)  # validate early
        if self.store.count_chunks() == 0:
            raise EmptyStoreError("the store holds no papers; run `rag ingest` first")
        k_chunks = top_k * self.cfg.chunks_per_paper
        dense_hits: list[_PaperHit] = []
        bm25_hits: list[_PaperHit] = []
        # Dense always runs: its cosine similarity is the calibrated relevance used for refusal.
        dense_hits = _group(self._dense_retrieve(query, max(k_chunks, 10), decisions), dense=True)
        if mode in ("bm25", "hybrid"):
            bm25_hits = _group(self._bm25_retrieve(query, k_chunks, decisions), dense=False)
        best_dense = dense_hits[0].dense if dense_hits else None

        if mode == "dense":
            ranked = [(h, h.score) for h in dense_hits]
        elif mode == "bm25":
            ranked = [(h, h.score) for h in bm25_hits]
        else:
            ranked = self._rrf([dense_hits, bm25_hits])
        dense_by_id = {str(h.node.metadata.get("paper_id")): h.dense for h in dense_hits}
        sources = []
        for number, (hit, score) in enumerate(ranked[:top_k], start=1):
            m = hit.node.metadata
            pid = str(m.get("paper_id"))
            sources.append(
                Source(
                    number=number,
                    paper_id=pid,
                    title=str(m.get("title", "")),
                    url=str(m.get("url", "")),
                    decision=str(m.get("decision", "")),
                    authors=[a for a in str(m.get("authors", "")).split("; ") if a],
                    text=_ordered_text(hit.node, hit.chunks),
                    score=round(float(score), 6),
                    dense_score=dense_by_id.get(pid),
                )
            )
        return Retrieval(query=query, mode=mode, sources=sources, best_dense=best_dense)

    def _rrf(self, rankings: list[list[_PaperHit]]) -> list[tuple[_PaperHit, float]]:
        scores: dict[str, float] = {}
        hits: dict[str, _PaperHit] = {}
        for ranking in rankings:
            for rank, hit in enumerate(ranking, start=1):
                pid = str(hit.node.metadata.get("paper_id"))
                scores[pid] = scores.get(pid, 0.0) + 1.0 / (self.cfg.rrf_k + rank)
                if pid not in hits:
                    hits[pid] = hit
                else:
                    hits[pid].chunks.extend(c for c in hit.chunks if c not in hits[pid].chunks)
        order = sorted(scores, key=lambda p: -scores[p])
        return [(hits[p], scores[p]) for p in order]

