"""The library's front door: `RAG(settings)` ingests, retrieves, answers and chats."""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence, Unpack

from rag.answer.cache import AnswerCache, cache_key
from rag.errors import InvalidRequestError, NotFoundError, RagError
from rag.events import Event, Final, final_answer, replay
from rag.export import MAX_PAPERS, check_format, export
from rag.ingest.corpus import LoadReport, load_many, seed_path
from rag.permalink import Permalink, version_of
from rag.settings import SearchOptions, Settings, search_options
from rag.store.chroma import ModelRecord, PaperStore, StoreBusyError
from rag.store.papertable import PaperRow
from rag.types import Answer

if TYPE_CHECKING:  # the modules on llama-index load on first use (a light `rag stats` or bad-input error)
    from rag.answer.engine import AnswerEngine
    from rag.chat.conversation import Conversation
    from rag.fieldmap import FieldMap
    from rag.ingest.build import IngestReport
    from rag.models.adapt import AdaptConfig, AdaptReport
    from rag.retrieval.retrieve import PaperRetriever, Retrieval

logger = logging.getLogger(__name__)

MAX_NEIGHBOURS = 20  # on a paper's page


class RAG:
    """Cited question answering over a paper corpus; components load on first use."""

    def __init__(self, settings: Settings | None = None):
        self.settings = settings or Settings()
        self._lock = threading.RLock()
        self._model_lock = threading.Lock()  # following a model another process switched the store to
        self._embed: Any = None
        self._llm: Any = None
        self._store: PaperStore | None = None
        self._seed_checked = False
        self._model_record: ModelRecord | None = None
        self._retriever: PaperRetriever | None = None
        self._engine: AnswerEngine | None = None
        self.answers = AnswerCache(self.settings.answer.cache_size)
        self._map_lock = threading.Lock()  # one map computation at a time
        self._map: FieldMap | None = None

    # -- components -------------------------------------------------------------------------
    @property
    def embed_model(self) -> Any:
        """The embedding model the store's vectors were written with (its manifest decides)."""
        with self._lock:
            if self._embed is None:
                from rag.models.embeddings import build_embedder, model_for_store

                store = self._open_store()
                record = store.model_record() if store.count_chunks() else None
                path, self._model_record = model_for_store(self.settings.embedding, record, store.models_dir)
                self._embed = build_embedder(self.settings.embedding, path)
                _pin_llama_index_globals(embed_model=self._embed)
            return self._embed

    @property
    def llm(self) -> Any:
        with self._lock:
            if self._llm is None:
                from rag.models.llm import build_llm

                self._llm = build_llm(self.settings.llm)
                _pin_llama_index_globals(llm=self._llm)
            return self._llm

    def _open_store(self) -> PaperStore:
        if self._store is None:
            self._store = PaperStore(self.settings.store)
        return self._store

    @property
    def store(self) -> PaperStore:
        with self._lock:
            store = self._open_store()
            if not self._seed_checked:
                self._seed_checked = True
                if self.settings.store.auto_seed and store.count_chunks() == 0:
                    logger.info("empty store: ingesting the built-in seed corpus")
                    try:
                        self._ingest_report(load_many([seed_path()]), progress=False, only_if_empty=True)
                    except StoreBusyError:
                        logger.info("the empty store is being written by another process: not seeding it")
            return store

    @property
    def retriever(self) -> PaperRetriever:
        with self._lock:
            if self._retriever is None:
                reranker = None
                if self.settings.retrieval.rerank == "llm":
                    from rag.retrieval.rerank import LLMReranker

                    reranker = LLMReranker(self.llm)
                from rag.retrieval.retrieve import PaperRetriever

                self._retriever = PaperRetriever(
                    self.store, self.embed_model, self.settings.retrieval, reranker=reranker,
                    on_change=self._follow_store_model,
                )
            return self._retriever

    @property
    def engine(self) -> AnswerEngine:
        with self._lock:
            if self._engine is None:
                from rag.answer.engine import build_engine

                self._engine = build_engine(self.retriever, self.llm, self.embed_model, self.settings)
            return self._engine

    # -- corpus -----------------------------------------------------------------------------
    def ingest(self, paths: Sequence[str | Path] | None = None, progress: bool = True) -> IngestReport:
        """Ingest corpus files (default: the built-in seed corpus); the whole input is validated first."""
        loaded = load_many(list(paths) if paths else [seed_path()])
        self.store  # noqa: B018 - opens (and seeds) the store before the write
        return self._ingest_report(loaded, progress=progress)

    def _ingest_report(self, loaded: LoadReport, progress: bool, only_if_empty: bool = False) -> IngestReport:
        from rag.ingest.build import IngestReport, ingest_papers

        store = self._open_store()
        self.embed_model  # noqa: B018 - loaded before the write lock is taken
        with store.writing():  # another process's write finishes first (or this one fails: store busy)
            if only_if_empty and store.count_chunks():
                return IngestReport(skipped=dict(loaded.skipped))  # another process filled it meanwhile
            embed_model = self._follow_store_model()
            if store.model_record() is None or store.count_chunks() == 0:
                assert self._model_record is not None
                store.set_model_record(self._model_record)  # before any vector: the store names its model
            report = ingest_papers(store, embed_model, loaded.papers, self.settings.ingest, progress=progress)
        report.skipped = dict(loaded.skipped)
        self.answers.clear()  # stale anyway (the store's revision is in the key); frees the memory
        if self._retriever is not None:
            self._retriever.invalidate()
        return report

    def _follow_store_model(self) -> Any:
        """The embedding model of the store as it is now. When another process re-embedded it with
        another model (`rag adapt`) after this one loaded its model, load that one (a configured
        model that did not write the store is a ConfigError, as at start)."""
        if self._embed is None:
            return self.embed_model
        with self._model_lock:
            store = self._open_store()
            record = store.model_record() if store.count_chunks() else None
            current = self._model_record
            if record is None or (current is not None and record.fingerprint == current.fingerprint):
                return self._embed
            from rag.models.embeddings import build_embedder, model_for_store

            logger.info("the store's vectors now come from the %s model %s: loading it", record.name,
                        record.fingerprint)
            path, self._model_record = model_for_store(self.settings.embedding, record, store.models_dir)
            self._embed = build_embedder(self.settings.embedding, path)
            _pin_llama_index_globals(embed_model=self._embed)
            if self._retriever is not None:
                self._retriever.embed_model = self._embed
            if self._engine is not None:
                self._engine.embed_model = self._embed
            return self._embed

    def adapt(self, cfg: AdaptConfig | None = None, progress: bool = True) -> AdaptReport:
        """Fine-tune the embedding model on the stored papers' own text and re-embed the store with it.

        The model is trained from the configured (or bundled) model, saved in the store's
        `models/<fingerprint>` and named in the store's manifest, so later processes load it. The
        new vectors go to a sibling collection that replaces the store's only once complete: a
        failure leaves the store and its model as they were."""
        from rag.ingest.build import Chunker, ingest_papers
        from rag.models.adapt import (
            AdaptConfig,
            AdaptReport,
            adapt_model,
            corpus_fingerprint,
            require_training,
        )
        from rag.models.embeddings import (
            bf16_supported,
            build_embedder,
            bundled_model_path,
            model_fingerprint,
            model_for_store,
        )

        require_training()  # before anything is locked or written
        cfg = cfg or AdaptConfig()
        with self._lock, self.store.writing():  # no other write while the store is re-embedded
            store = self.store
            self.retriever.refresh()  # the papers as they are now, whichever process wrote them
            papers = self.retriever.papers().to_papers()
            base = self.settings.embedding.model_path or bundled_model_path()
            chunker = Chunker.for_model(self.embed_model, self.settings.ingest)
            chunks = [chunker.chunks(p) for p in papers]
            corpus = corpus_fingerprint([(p.id, p.title, p.abstract) for p in papers])
            work = store.models_dir / f".training-{os.getpid()}"
            shutil.rmtree(work, ignore_errors=True)
            sibling: PaperStore | None = None
            created: Path | None = None  # a model directory this call made (removed if the re-embed fails)
            try:
                bf16 = self.settings.embedding.precision == "bfloat16" or (
                    self.settings.embedding.precision == "auto" and bf16_supported()
                )
                adapt_model(Path(base), chunks, work, cfg, corpus=corpus, bf16=bf16, progress=progress)
                final = store.models_dir / model_fingerprint(work)
                if final.exists():
                    shutil.rmtree(work)
                else:
                    work.rename(final)
                    created = final
                path, record = model_for_store(
                    self.settings.embedding.model_copy(update={"model_path": final}), None, store.models_dir
                )
                embed = build_embedder(self.settings.embedding, path)
                sibling = PaperStore(self.settings.store, collection=f"{store.name}-adapting")
                if sibling.count_chunks():
                    sibling.drop()
                    sibling = PaperStore(self.settings.store, collection=f"{store.name}-adapting")
                sibling.set_model_record(record)
                written = ingest_papers(sibling, embed, papers, self.settings.ingest, progress=progress)
                store.replace_with(sibling)
                sibling = created = None
            finally:
                shutil.rmtree(work, ignore_errors=True)
                if sibling is not None:
                    sibling.drop()
                if created is not None:
                    shutil.rmtree(created, ignore_errors=True)
            self._embed, self._model_record = embed, record
            _pin_llama_index_globals(embed_model=embed)
            self._retriever = self._engine = None
            self.answers.clear()
            training = json.loads((final / "adaptation.json").read_text())
            return AdaptReport(model_dir=final, record=record, papers=len(papers),
                               chunks=written.chunks_written, training=training)

    def remove(self, paper_id: str) -> int:
        """Delete a paper; raises RagError when the store has no such paper (StoreBusyError while
        another process writes to the store for longer than `lock_timeout`)."""
        n = self.store.remove_paper(paper_id)
        if n == 0:
            raise RagError(f"no paper with id {paper_id!r} in the store")
        self.answers.clear()
        if self._retriever is not None:
            self._retriever.invalidate()
        return n

    def stats(self) -> dict[str, Any]:
        """Papers and chunks in the store, and where it lives."""
        store = self.store
        papers = store.paper_count()  # syncs first: another process's write (e.g. `rag adapt`) shows
        record = store.model_record()
        return {
            "papers": papers,
            "chunks": store.count_chunks(),
            "store": store.location,
            "collection": self.settings.store.collection,
            "embedding_model": record.name if record else None,
            "embedding_fingerprint": record.fingerprint if record else None,
        }

    # -- links ------------------------------------------------------------------------------
    def version(self) -> str:
        """A short digest of what answers are made from now: the store's revision, the embedding
        model and the settings answers depend on (rag.permalink.version_of)."""
        record = self.store.model_record()
        return version_of(self.store.sync(), record.fingerprint if record else None, self.settings)

    def permalink(self, question: str, **options: Unpack[SearchOptions]) -> Permalink:
        """A link that asks `question` again with these options (`.url(base)`, `.query()`), stamped
        with `version()` so that opening it later says whether the store or model changed since."""
        return Permalink.of(question, search_options(options), self.version())

    # -- papers out -------------------------------------------------------------------------
    def papers(self, paper_ids: Sequence[str]) -> list[PaperRow]:
        """The stored papers `paper_ids` (title, authors, decision, link, abstract), in that order,
        repeats once. InvalidRequestError for none or more than rag.export.MAX_PAPERS ids;
        NotFoundError naming the ids the store does not hold."""
        ids = list(dict.fromkeys(str(i) for i in paper_ids))
        if not ids:
            raise InvalidRequestError("no paper ids given")
        if len(ids) > MAX_PAPERS:
            raise InvalidRequestError(f"{len(ids)} papers asked for; at most {MAX_PAPERS} at once")
        rows = self.store.current_table().rows(ids)
        unknown = [i for i in ids if i not in rows]
        if unknown:
            shown = ", ".join(repr(i) for i in unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
            raise NotFoundError(f"no paper with id {shown} in the store")
        return [rows[i] for i in ids]

    def export(self, paper_ids: Sequence[str], fmt: str = "bibtex") -> str:
        """The stored papers `paper_ids` (in that order, repeats once) as BibTeX, CSV, Markdown or
        JSON (rag.export); errors as `papers`, and InvalidRequestError for an unknown format."""
        check_format(fmt)
        return export(self.papers(paper_ids), fmt)

    # -- questions --------------------------------------------------------------------------
    def retrieve(self, question: str, **options: Unpack[SearchOptions]) -> Retrieval:
        """The papers retrieved for `question` (no answer is written; `show_all` does not apply), read as
        `ask` reads it: a request in conversational words as the plain question it asks."""
        from rag.text.phrasing import restate

        return self.retriever.retrieve(restate(question), search_options(options))

    def ask(self, question: str, **options: Unpack[SearchOptions]) -> Answer:
        """Answer a question with citations to the retrieved papers. Options (rag.settings.SearchOptions):
        `top_k`, `decisions`, `retriever`, and `show_all` (list every paper that meets the question,
        not only the first top_k)."""
        return final_answer(self.stream(question, **options))

    def stream(self, question: str, **options: Unpack[SearchOptions]) -> Iterator[Event]:
        """Like `ask`, as typed events (rag.events): `Sources`, `Token`..., then `Final` (the answer).
        A repeated question is answered from the answer cache (`Answer.timings.cache == "hit"`)."""
        opts = search_options(options)
        key, hit = self._lookup(question, opts)
        if hit is not None:
            yield from replay(hit)
            return
        compared = self._comparison(question)
        events = replay(compared) if compared is not None else self.engine.stream_answer(question, opts)
        for event in events:
            if isinstance(event, Final) and key:
                event.answer.timings.cache = "miss"
                self.answers.put(key, event.answer)
            yield event

    def _comparison(self, question: str) -> Answer | None:
        """"Compare A and B", "A versus B" with two or more papers named by title or short name: their
        comparison table (problem, method, data, result: each cell a sentence of that abstract, as
        the chat's "compare the first two" gives). None for any other question."""
        from rag.text.followup import MAX_COMPARED, asks_to_compare
        from rag.text.query import parse

        if not self.settings.retrieval.understand or not asks_to_compare(question):
            return None
        papers = self.retriever.papers()
        intent = parse(question, papers.catalog)
        if intent.kind != "named" or len(intent.named_ids) < 2:
            return None
        rows = papers.rows(intent.named_ids[:MAX_COMPARED])
        ids = [p for p in intent.named_ids[:MAX_COMPARED] if p in rows]
        if len(ids) < 2:
            return None
        answer = _compared(question, ids, rows)
        answer.retriever = "named"
        return answer

    def paper_page(self, paper_id: str, neighbours: int = 5) -> Answer:
        """One stored paper as an answer (the UI's `/?paper=ID`, `rag paper`, `GET /api/papers/{id}`):
        its title, authors, decision, link and abstract [1], then its `neighbours` nearest papers
        [2]… by the "similar to" retrieval. NotFoundError for an id the store does not hold."""
        from rag.chat.followup_answer import answer_paper

        if not 0 <= neighbours <= MAX_NEIGHBOURS:
            raise InvalidRequestError(f"neighbours must be 0 to {MAX_NEIGHBOURS}, not {neighbours}")
        [row] = self.papers([paper_id])
        near = []
        if neighbours:
            found = self.retriever.retrieve(f'Papers similar to "{row.title}"', {"top_k": neighbours + 1})
            near = [s for s in found.sources if s.paper_id != row.paper_id][:neighbours]
        answer = answer_paper(row, near)
        answer.llm = self.settings.llm.display_name
        return answer

    def field_map(self, progress: bool = False) -> FieldMap:
        """The map of the field (rag.fieldmap): every stored paper placed in 2D from its stored vector,
        in clusters labelled by their distinctive words. Computed once per store revision (`progress`:
        a progress bar over its steps) and kept beside the store; `FieldMap.cached` says it was read.
        Render it with `.svg(highlight=answer ids)` or `.html()` (a PNG: `rag map -o map.png`)."""
        from rag import fieldmap

        with self._map_lock:
            stamp = self.store.sync()
            revision = f"{stamp.revision}:{stamp.chunks}"
            if self._map is not None and self._map.revision == revision:
                return self._map.model_copy(update={"cached": True})
            path = self.store.field_map_path
            kept = fieldmap.load(path, revision)
            if kept is None:
                rows = list(self.store.current_table().all_rows())
                ids = [r.paper_id for r in rows]
                vectors: dict[str, Any] = {}
                for i in range(0, len(ids), 500):
                    vectors.update(self.store.paper_vectors(ids[i : i + 500]))
                rows = [r for r in rows if r.paper_id in vectors]
                kept = fieldmap.compute(
                    [r.paper_id for r in rows], [r.title for r in rows], [r.text for r in rows],
                    [r.decision for r in rows], [vectors[r.paper_id] for r in rows], revision, progress,
                )
                logger.info("map of %d papers in %.1f s", kept.papers, kept.seconds)
                fieldmap.save(path, kept)
            self._map = kept
            return kept

    def compare(self, paper_ids: Sequence[str]) -> Answer:
        """The comparison table of two to six stored papers (in the order given): one row each, with
        the sentence of its abstract that states its problem, method, data and result (empty where
        it states none); `Answer.comparison_table("csv")` writes it out. InvalidRequestError for fewer
        than two or more than six ids, NotFoundError naming ids the store does not hold."""
        from rag.text.followup import MAX_COMPARED

        ids = list(dict.fromkeys(str(i) for i in paper_ids))
        if not 2 <= len(ids) <= MAX_COMPARED:
            raise InvalidRequestError(f"a comparison takes 2 to {MAX_COMPARED} different papers, not {len(ids)}")
        rows = {row.paper_id: row for row in self.papers(ids)}
        answer = _compared("Compare " + "; ".join(f'"{rows[i].title}"' for i in ids), ids, rows)
        answer.retriever = "named"
        answer.llm = self.settings.llm.display_name
        return answer

    def cached(self, question: str, **options: Unpack[SearchOptions]) -> Answer | None:
        """The cached answer to this standalone question with these options, or None (no model or
        retrieval runs; costs the store's stamp check)."""
        return self._lookup(question, search_options(options))[1]

    def _lookup(self, question: str, options: SearchOptions) -> tuple[str | None, Answer | None]:
        """The answer cache's key for these options (None: no cache) and its answer, if any."""
        if self.answers.size <= 0:
            return None, None
        t0 = time.perf_counter()
        key = cache_key(question, options, self.settings, self.store.sync())
        hit = self.answers.get(key)
        if hit is not None:
            _served_from_cache(hit, t0)
        return key, hit

    def chat(self, question: str, history: Sequence[Any] = (), **options: Unpack[SearchOptions]) -> Answer:
        """Answer a follow-up in the context of `history` (ChatTurns or {"role", "content"} dicts):
        it is condensed into a standalone question first. Options as for `ask`."""
        from rag.chat.conversation import chat

        return chat(self, question, history, **options)

    def chat_stream(
        self, question: str, history: Sequence[Any] = (), **options: Unpack[SearchOptions]
    ) -> Iterator[Event]:
        """`chat` as events: `Condensed`, then those of `stream`."""
        from rag.chat.conversation import chat_stream

        return chat_stream(self, question, history, **options)

    def conversation(self, max_turns: int = 10, **options: Unpack[SearchOptions]) -> Conversation:
        """A `Conversation` that keeps its turns: `conv.ask("...")`, then follow-ups."""
        from rag.chat.conversation import Conversation

        return Conversation(self, max_turns, **options)


def _compared(question: str, ids: Sequence[str], rows: dict[str, PaperRow]) -> Answer:
    """The comparison answer of the papers `ids` (numbered 1.. in that order)."""
    from rag.chat.followup_answer import answer_compare
    from rag.text.followup import FollowUp, ShownPaper

    shown = [ShownPaper(number=n, paper_id=pid, title=rows[pid].title) for n, pid in enumerate(ids, 1)]
    return answer_compare(question, FollowUp(kind="compare", papers=shown), rows)


def _served_from_cache(answer: Answer, t0: float) -> None:
    """Timings of an answer served from the cache: what serving it took."""
    took = (time.perf_counter() - t0) * 1000
    answer.timings.cache = "hit"
    answer.timings.retrieval_ms = 0.0
    answer.timings.queue_ms = 0.0
    answer.timings.first_token_ms = took
    answer.timings.total_ms = took


def _pin_llama_index_globals(llm: Any = None, embed_model: Any = None) -> None:
    """Hand llama-index our models so no component falls back to OpenAI."""
    from llama_index.core import Settings as LlamaSettings

    if embed_model is not None:
        LlamaSettings.embed_model = embed_model
    if llm is not None:
        LlamaSettings.llm = llm
