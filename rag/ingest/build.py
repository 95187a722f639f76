"""Papers → chunks (rag.text.chunking) → embeddings → Chroma, incrementally and a whole paper at a time."""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import MetadataMode, TextNode
from llama_index.core.vector_stores.utils import node_to_metadata_dict

from rag.ingest.corpus import Paper
from rag.settings import IngestSettings
from rag.store.chroma import PaperStore
from rag.store.vectors import unit_rows
from rag.text.chunking import Chunk, TokenCounter, paper_chunks, scheme, token_counter
from rag.text.citations import abstract_sentences

if TYPE_CHECKING:
    from rag.store.sentence_vectors import SentenceVectors

logger = logging.getLogger(__name__)

# Metadata stays out of embedded and LLM text (the chunker puts the title in the embedded text).
HIDDEN_KEYS = ["paper_id", "authors", "decision", "url", "content_hash", "chunk_index", "n_chunks", "kind"]


@dataclass
class IngestReport:
    """What one ingest did."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    chunks_written: int = 0
    seconds: float = 0.0
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def papers_per_second(self) -> float:
        written = self.added + self.updated
        return written / self.seconds if self.seconds > 0 else 0.0


def paper_metadata(paper: Paper, chunking: str) -> dict[str, Any]:
    return {
        "paper_id": paper.id,
        "title": paper.title,
        "authors": "; ".join(paper.authors),
        "decision": paper.decision,
        "url": paper.url,
        # The paper's content and how it was chunked: either changing means the paper is rewritten.
        "content_hash": f"{paper.content_hash}/{chunking}",
    }


@dataclass
class Chunker:
    """Splits papers the way the embedding model can read them (its own token limit)."""

    window: int
    stride: int
    count: TokenCounter
    max_tokens: int
    composed: bool = False  # window vectors composed from the title's and sentences' vectors

    @classmethod
    def for_model(cls, embed_model: BaseEmbedding, cfg: IngestSettings) -> Chunker:
        count, limit = token_counter(embed_model)
        composed = cfg.window_vectors == "composed"
        if composed and not hasattr(embed_model, "pooled_batch"):
            logger.warning("%s cannot pool sentences: windows are embedded whole", type(embed_model).__name__)
            composed = False
        return cls(cfg.window_sentences, cfg.window_stride, count, limit, composed)

    @property
    def scheme(self) -> str:
        return scheme(self.window, self.stride, self.max_tokens, self.composed)

    def chunks(self, paper: Paper) -> list[Chunk]:
        return paper_chunks(paper.title, paper.abstract, self.window, self.stride, self.max_tokens, self.count)

    def nodes(self, paper: Paper) -> list[tuple[TextNode, Chunk]]:
        """The paper's chunks as (llama-index node whose text is the stored document, the chunk)."""
        chunks = self.chunks(paper)
        meta = paper_metadata(paper, self.scheme)
        nodes = []
        for i, chunk in enumerate(chunks):
            node = TextNode(
                id_=f"{paper.id}#{paper.content_hash}#{i}",
                text=chunk.document,
                metadata={**meta, "chunk_index": i, "n_chunks": len(chunks), "kind": chunk.kind},
                excluded_embed_metadata_keys=HIDDEN_KEYS,
                excluded_llm_metadata_keys=HIDDEN_KEYS,
            )
            nodes.append((node, chunk))
        return nodes


def expected_hash(paper: Paper, chunker: Chunker) -> str:
    return f"{paper.content_hash}/{chunker.scheme}"


def _embed(embed_model: BaseEmbedding, texts: list[str]) -> list[list[float]]:
    bulk = getattr(embed_model, "bulk", None)
    with bulk() if bulk else contextlib.nullcontext():  # the embedder batches by length
        return embed_model.get_text_embedding_batch(texts)


def _composed(
    embed_model: Any, papers: Sequence[Paper], chunks: Sequence[Sequence[Chunk]], sentences: SentenceVectors | None
) -> list[list[float]]:
    """Chunk vectors from one pass over each paper's title and sentences: a window's vector is the
    token-weighted mean of its title's and sentences' pooled vectors (what mean pooling over the whole
    window computes, less the attention across sentence borders), so each sentence is embedded once
    rather than in every window that holds it, and its own vector is kept for answers.

    Against windows embedded whole (docs/measured.md): ~40 % less arithmetic; hybrid topics_dev
    nDCG@10 -0.013 [-0.033, +0.007] and descriptions_dev MRR -0.008 [-0.020, +0.001] (paired 95 %
    CIs), listed papers judged relevant 0.732 against 0.750: an option for slow CPUs, not the default."""
    texts: list[str] = []
    starts: list[int] = []
    for paper in papers:
        starts.append(len(texts))
        texts.append(paper.title)  # the title chunk's text; "title\n" of a window tokenizes the same
        texts.extend(abstract_sentences(paper.abstract))
    pooled, counts = embed_model.pooled_batch(texts)
    weighted = pooled * counts[:, None]
    out: list[np.ndarray] = []
    for base, own in zip(starts, chunks):
        for chunk in own:
            if chunk.kind == "title":
                out.append(pooled[base])
            else:
                start, end = chunk.span
                out.append(weighted[base] + weighted[base + 1 + start : base + 1 + end].sum(0))
    if sentences is not None:
        titles = set(starts)
        rows = [i for i in range(len(texts)) if i not in titles]
        sentences.put([texts[i] for i in rows], unit_rows(pooled[rows]))
    windows: list[list[float]] = unit_rows(np.stack(out)).tolist()
    return windows


def _windows(
    embed_model: Any, papers: Sequence[Paper], chunks: Sequence[Sequence[Chunk]], sentences: SentenceVectors | None
) -> list[list[float]]:
    """Chunk vectors, each chunk embedded whole; with `sentences`, each abstract sentence's vector is
    pooled from the same pass over the windows that hold it ("late chunking": the mean of its tokens'
    states in the window's context, averaged over its windows), so no sentence is embedded twice."""
    texts = [c.embed_text for own in chunks for c in own]
    if sentences is None:
        return _embed(embed_model, texts)
    if not hasattr(embed_model, "embed_with_spans"):  # a model without token states: sentences alone
        todo = sentences.missing(s for p in papers for s in abstract_sentences(p.abstract))
        if todo:
            sentences.put(todo, _embed(embed_model, todo))
        return _embed(embed_model, texts)
    spans: list[list[tuple[int, int]]] = []
    owners: list[list[str]] = []
    for paper, own in zip(papers, chunks):
        said = abstract_sentences(paper.abstract)
        for chunk in own:
            pos, where, whose = len(paper.title) + 1, [], []  # after the window's "title\n" (rag.text.chunking)
            if chunk.kind == "window":
                for k in range(*chunk.span):
                    where.append((pos, pos + len(said[k])))
                    whose.append(said[k])
                    pos += len(said[k]) + 1
            spans.append(where)
            owners.append(whose)
    vectors: list[list[float]]
    vectors, parts = embed_model.embed_with_spans(texts, spans)
    pooled: dict[str, list[np.ndarray]] = {}
    for whose, vecs in zip(owners, parts):
        for text, vec in zip(whose, vecs):
            pooled.setdefault(text, []).append(vec)
    if pooled:
        sentences.put(list(pooled), unit_rows([np.mean(v, axis=0) for v in pooled.values()]))
    return vectors


def _fill_sentences(
    sentences: SentenceVectors, embed_model: BaseEmbedding, chunker: Chunker, papers: Sequence[Paper],
    batch: int, progress: bool,
) -> None:
    """Sentence vectors for stored papers that lack them (a store written before they were kept)."""
    gaps = set(sentences.missing(s for p in papers for s in abstract_sentences(p.abstract)))  # one read
    lacking = [p for p in papers if any(s in gaps for s in abstract_sentences(p.abstract))] if gaps else []
    if not lacking:
        return
    logger.info("computing the abstract sentence vectors of %d stored papers", len(lacking))
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(lacking), unit="paper", desc="sentence vectors", dynamic_ncols=True)
    try:
        for part in _batches(lacking, batch):
            own = [chunker.chunks(p) for p in part]
            if chunker.composed:
                _composed(embed_model, part, own, sentences)
            else:
                _windows(embed_model, part, own, sentences)
            if bar is not None:
                bar.update(len(part))
    finally:
        if bar is not None:
            bar.close()


def _batches(items: Sequence[Paper], size: int) -> Iterable[Sequence[Paper]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def ingest_papers(
    store: PaperStore,
    embed_model: BaseEmbedding,
    papers: Sequence[Paper],
    cfg: IngestSettings,
    progress: bool = True,
) -> IngestReport:
    """Write new and changed papers; a paper's chunks are upserted in one call with its batch.

    The store's write lock is held throughout (from reading what it holds to the last batch), so a
    concurrent writer in another process waits or reports the store busy."""
    with store.writing():
        return _ingest_papers(store, embed_model, papers, cfg, progress)


def _ingest_papers(
    store: PaperStore, embed_model: BaseEmbedding, papers: Sequence[Paper], cfg: IngestSettings, progress: bool
) -> IngestReport:
    start = time.perf_counter()
    report = IngestReport()
    manifest = store.manifest()
    chunker = Chunker.for_model(embed_model, cfg)
    todo: list[Paper] = []
    for paper in papers:
        entry = manifest.get(paper.id)
        if entry is not None and entry.is_complete(expected_hash(paper, chunker)):
            report.unchanged += 1
        else:
            todo.append(paper)
    logger.info("%d papers unchanged, %d to write", report.unchanged, len(todo))
    sentences = None
    if cfg.sentence_vectors:
        from rag.store.sentence_vectors import SentenceVectors, embedder_key

        sentences = SentenceVectors(store.sentence_vectors_path, embedder_key(embed_model))
    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), unit="paper", desc="ingest", dynamic_ncols=True)
    try:
        for batch in _batches(todo, cfg.batch_papers):
            per_paper = [chunker.nodes(p) for p in batch]
            nodes = [n for pairs in per_paper for n, _ in pairs]
            own = [[c for _, c in pairs] for pairs in per_paper]
            if chunker.composed:
                vectors = _composed(embed_model, batch, own, sentences)
            else:
                vectors = _windows(embed_model, batch, own, sentences)
            metadatas = [
                node_to_metadata_dict(n, remove_text=True, flat_metadata=True) for n in nodes
            ]
            store.write(
                ids=[n.node_id for n in nodes],
                embeddings=vectors,
                metadatas=metadatas,
                documents=[n.get_content(metadata_mode=MetadataMode.NONE) for n in nodes],
            )
            # Chunks of an earlier version (or of an interrupted write) go only after the new
            # version is in, so the paper never disappears from the store.
            new_ids = {n.node_id for n in nodes}
            stale: list[str] = []
            for p in batch:
                entry = manifest.get(p.id)
                if entry is None:
                    report.added += 1
                else:
                    report.updated += 1
                    stale.extend(cid for cid in entry.chunk_ids if cid not in new_ids)
            store.delete_chunks(stale)
            report.chunks_written += len(nodes)
            if bar is not None:
                bar.update(len(batch))
    finally:
        if bar is not None:
            bar.close()
    if sentences is not None:  # papers stored before sentence vectors were kept (or by another model)
        written = {p.id for p in todo}
        _fill_sentences(
            sentences, embed_model, chunker, [p for p in papers if p.id not in written], cfg.batch_papers, progress
        )
    report.seconds = time.perf_counter() - start
    return report
