"""The library's front door: `RAG(settings)` ingests, retrieves, answers and chats."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Iterator, Sequence

from .corpus import LoadReport, load_many, seed_path
from .engine import AnswerEngine, build_engine
from .errors import RagError
from .ingest import IngestReport, ingest_papers
from .retrieve import PaperRetriever, Retrieval
from .settings import RetrieverMode, Settings
from .store import PaperStore
from .types import Answer

logger = logging.getLogger(__name__)


class RAG:
    """Cited question answering over a paper corpus; components load on first use."""

    def __init__(self, settings: Settings | None = None):
        self.settings = settings or Settings()
        self._lock = threading.RLock()
        self._embed: Any = None
        self._llm: Any = None
        self._store: PaperStore | None = None
        self._retriever: PaperRetriever | None = None
        self._engine: AnswerEngine | None = None

    # -- components -------------------------------------------------------------------------
    @property
    def embed_model(self) -> Any:
        with self._lock:
            if self._embed is None:
                from .embeddings import build_embedder

                self._embed = build_embedder(self.settings.embedding)
                _pin_llama_index_globals(embed_model=self._embed)
            return self._embed

    @property
    def llm(self) -> Any:
        with self._lock:
            if self._llm is None:
                from .llm import build_llm

                self._llm = build_llm(self.settings.llm)
                _pin_llama_index_globals(llm=self._llm)
            return self._llm

    @property
    def store(self) -> PaperStore:
        with self._lock:
            if self._store is None:
                self._store = PaperStore(self.settings.store)
                if self.settings.store.auto_seed and self._store.count_chunks() == 0:
                    logger.info("empty store: ingesting the built-in seed corpus")
                    self._ingest_report(load_many([seed_path()]), progress=False)
            return self._store

    @property
    def retriever(self) -> PaperRetriever:
        with self._lock:
            if self._retriever is None:
                reranker = None
                if self.settings.retrieval.rerank == "llm":
                    from .rerank import LLMReranker

                    reranker = LLMReranker(self.llm)
                self._retriever = PaperRetriever(
                    self.store, self.embed_model, self.settings.retrieval, reranker=reranker
                )
            return self._retriever

    @property
    def engine(self) -> AnswerEngine:
        with self._lock:
            if self._engine is None:
                self._engine = build_engine(self.retriever, self.llm, self.embed_model, self.settings)
            return self._engine

    # -- corpus -----------------------------------------------------------------------------
    def ingest(self, paths: Sequence[str | Path] | None = None, progress: bool = True) -> IngestReport:
        """Ingest corpus files (default: the built-in seed corpus); the whole input is validated first."""
        loaded = load_many(list(paths) if paths else [seed_path()])
        self.store  # noqa: B018 - opens (and seeds) the store before the write
        return self._ingest_report(loaded, progress=progress)

    def _ingest_report(self, loaded: LoadReport, progress: bool) -> IngestReport:
        assert self._store is not None
        report = ingest_papers(
            self._store, self.embed_model, loaded.papers, self.settings.ingest, progress=progress
        )
        report.skipped = dict(loaded.skipped)
        if self._retriever is not None:
            self._retriever.invalidate()
        return report

    def remove(self, paper_id: str) -> int:
        """Delete a paper; raises RagError when the store has no such paper."""
        n = self.store.remove_paper(paper_id)
        if n == 0:
            raise RagError(f"no paper with id {paper_id!r} in the store")
        if self._retriever is not None:
            self._retriever.invalidate()
        return n

    def stats(self) -> dict[str, Any]:
        """Papers and chunks in the store, and where it lives."""
        store = self.store
        return {
            "papers": len(store.paper_ids()),
            "chunks": store.count_chunks(),
            "store": store.location,
            "collection": self.settings.store.collection,
        }

    # -- questions --------------------------------------------------------------------------
    def retrieve(
        self,
        question: str,
        top_k: int | None = None,
        decisions: Sequence[str] | None = None,
        retriever: RetrieverMode | None = None,
    ) -> Retrieval:
        return self.retriever.retrieve(question, top_k=top_k, decisions=decisions, mode=retriever)

    def ask(
        self,
        question: str,
        top_k: int | None = None,
        decisions: Sequence[str] | None = None,
        retriever: RetrieverMode | None = None,
    ) -> Answer:
        """Answer a question with citations to the retrieved papers."""
        return self.engine.answer(question, top_k=top_k, decisions=decisions, mode=retriever)

    def stream(
        self,
        question: str,
        top_k: int | None = None,
        decisions: Sequence[str] | None = None,
        retriever: RetrieverMode | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Like `ask`, as events: sources, tokens, then the validated answer."""
        return self.engine.stream_answer(question, top_k=top_k, decisions=decisions, mode=retriever)


def _pin_llama_index_globals(llm: Any = None, embed_model: Any = None) -> None:
    """Hand llama-index our models so no component falls back to OpenAI."""
    from llama_index.core import Settings as LlamaSettings

    if embed_model is not None:
        LlamaSettings.embed_model = embed_model
    if llm is not None:
        LlamaSettings.llm = llm
