"""The paper table built from one scan of the store: metadata, whole abstracts, BM25 and the catalog.

BM25 scores one document per paper (the title counted `bm25_title_boost` times, then the abstract),
so a long abstract split into several windows is still one paper to BM25.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from typing import Any, Sequence

from llama_index.core.schema import QueryBundle, TextNode
from llama_index.core.vector_stores.utils import node_to_metadata_dict

from .corpus import Paper
from .errors import EmptyStoreError, StoreError
from .query import Catalog
from .settings import RetrievalSettings
from .store import PaperStore
from .terms import TermStats
from .types import Source

logger = logging.getLogger(__name__)


@dataclass
class PaperRecord:
    paper_id: str
    title: str
    authors: list[str]
    decision: str
    url: str
    parts: list[tuple[int, str]] = field(default_factory=list)  # (chunk index, stored document)
    legacy: bool = False  # chunks written before sentence windows (whole, overlapping chunks)

    @property
    def text(self) -> str:
        docs = [d for _, d in sorted(self.parts) if d]
        return (" … " if self.legacy else " ").join(docs)


class PaperIndex:
    """Every stored paper, in store order; lookups by id; BM25 over papers; the query catalog."""

    def __init__(self, records: list[PaperRecord], cfg: RetrievalSettings):
        if not records:
            raise EmptyStoreError("the store holds no papers; run `rag ingest` first")
        self.cfg = cfg
        self.records = records
        self.by_id = {r.paper_id: r for r in records}
        self.catalog = Catalog.build((r.paper_id, r.title, r.authors, r.decision) for r in records)
        self._terms: TermStats | None = None
        self._bm25 = self._build_bm25()

    @classmethod
    def from_store(cls, store: PaperStore, cfg: RetrievalSettings) -> PaperIndex:
        records: dict[str, PaperRecord] = {}
        legacy = 0
        for _, meta, doc in store.iter_records(["metadatas", "documents"]):
            pid = str(meta.get("paper_id"))
            rec = records.get(pid)
            if rec is None:
                rec = records[pid] = PaperRecord(
                    paper_id=pid,
                    title=str(meta.get("title", "")),
                    authors=[a for a in str(meta.get("authors", "")).split("; ") if a],
                    decision=str(meta.get("decision", "")),
                    url=str(meta.get("url", "")),
                )
            if "kind" not in meta:
                rec.legacy = True
                legacy += 1
            rec.parts.append((int(meta.get("chunk_index", 0)), doc or ""))
        if legacy:
            logger.warning(
                "%d chunks were written by an older version (one vector per abstract head); run "
                "`rag ingest` again to re-embed them with sentence windows",
                legacy,
            )
        logger.info("paper table: %d papers", len(records))
        return cls(list(records.values()), cfg)

    def __len__(self) -> int:
        return len(self.records)

    def __contains__(self, pid: object) -> bool:
        return pid in self.by_id

    def to_papers(self) -> list[Paper]:
        """The stored papers as ingest takes them (to re-embed a store from itself)."""
        legacy = [r.paper_id for r in self.records if r.legacy]
        if legacy:
            raise StoreError(
                f"{len(legacy)} papers were written by an older version (e.g. {legacy[0]}); run "
                "`rag ingest` with their corpus files first"
            )
        return [
            Paper(id=r.paper_id, title=r.title, abstract=r.text, authors=tuple(r.authors), decision=r.decision, url=r.url)
            for r in self.records
        ]

    def title(self, pid: str) -> str:
        return self.by_id[pid].title

    def text(self, pid: str) -> str:
        return self.by_id[pid].text

    def decision(self, pid: str) -> str:
        return self.by_id[pid].decision if pid in self.by_id else ""

    def source(self, number: int, pid: str, score: float, dense: float | None) -> Source:
        r = self.by_id[pid]
        return Source(
            number=number,
            paper_id=pid,
            title=r.title,
            url=r.url,
            decision=r.decision,
            authors=list(r.authors),
            text=r.text,
            score=round(float(score), 6),
            dense_score=dense,
        )

    def term_stats(self) -> TermStats:
        if self._terms is None:
            self._terms = TermStats.from_texts(f"{r.title} {r.text}" for r in self.records)
        return self._terms

    # -- BM25 ---------------------------------------------------------------------------------
    def _build_bm25(self) -> Any:
        import bm25s
        from llama_index.retrievers.bm25 import BM25Retriever

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # it sets DEBUG on import
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
        boost = self.cfg.bm25_title_boost
        texts = [" ".join([r.title] * boost + [r.text]) for r in self.records]
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
        bm25 = bm25s.BM25(k1=self.cfg.bm25_k1, b=self.cfg.bm25_b)
        bm25.index(tokens, show_progress=False)
        nodes = [TextNode(id_=r.paper_id, text="", metadata={"paper_id": r.paper_id}) for r in self.records]
        bm25.corpus = [node_to_metadata_dict(n) | {"node_id": n.node_id} for n in nodes]
        logger.info("BM25 index over %d papers", len(self.records))
        return BM25Retriever(existing_bm25=bm25, stemmer=stemmer, similarity_top_k=min(10, len(nodes)))

    def bm25(self, text: str, k: int, decisions: Sequence[str] | None) -> list[tuple[str, float]]:
        """(paper id, BM25 score) best first; papers sharing no word with the text are left out."""
        r = copy.copy(self._bm25)  # per-query top-k and mask without touching the shared index
        r.similarity_top_k = min(k, len(self.records))
        if decisions:
            mask = [int(rec.decision in decisions) for rec in self.records]
            if not any(mask):
                return []
            r.similarity_top_k = min(r.similarity_top_k, sum(mask))
            r.corpus_weight_mask = mask
        hits = r.retrieve(QueryBundle(text))
        return [(str(h.node.metadata.get("paper_id")), float(h.score or 0)) for h in hits if (h.score or 0) > 0]
