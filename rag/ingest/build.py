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
from rag.settings import IngestSettings, WindowVectors
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
    vectors: WindowVectors = "embedded"  # how window vectors are made (IngestSettings.window_vectors)

    @classmethod
    def for_model(cls, embed_model: BaseEmbedding, cfg: IngestSettings) -> Chunker:
        count, limit = token_counter(embed_model)
        vectors: WindowVectors = cfg.window_vectors
        if vectors != "embedded" and not hasattr(embed_model, "span_sums"):
            logger.info("%s shows no token states: windows are embedded whole", type(embed_model).__name__)
            vectors = "embedded"
        return cls(cfg.window_sentences, cfg.window_stride, count, limit, vectors)

    @property
    def scheme(self) -> str:
        return scheme(self.window, self.stride, self.max_tokens, self.vectors)

    def vectors_of(
        self, embed_model: Any, papers: Sequence[Paper], chunks: Sequence[Sequence[Chunk]], sentences: SentenceVectors | None
    ) -> list[list[float]]:
        """The chunk vectors of `papers` (and their sentences' vectors into `sentences`)."""
        if self.vectors == "late":
            return _late(embed_model, papers, chunks, sentences)
        return _windows(embed_model, papers, chunks, sentences)

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


def _passes(lengths: list[int], budget: int) -> list[tuple[int, int]]:
    """[start, end) runs of consecutive sentences (word pieces `lengths`) to read in one pass each:
    within `budget`, as few as it allows, and of even size, so that no sentence is read at the edge
    of a pass with little context (one too long alone is a run of its own, cut by the model)."""
    total = sum(lengths)
    target = total / max(1, -(-total // budget))
    runs, start, used = [], 0, 0
    for i, n in enumerate(lengths):
        if i > start and (used + n > budget or used + n / 2 > target):
            runs.append((start, i))
            start, used = i, 0
        used += n
    runs.append((start, len(lengths)))
    return runs


def late_passes(
    papers: Sequence[Paper], tokenizer: Any, max_length: int
) -> tuple[list[list[str]], list[str], list[list[tuple[int, int]]], list[list[tuple[int, int]]]]:
    """The passes `_late` reads: each paper's abstract sentences, the pass texts ("title\\n" + a run
    of sentences), each pass's character spans (its title, then each sentence), and each paper's
    runs of sentences."""
    budget = max_length - 2  # [CLS] and [SEP]
    said = [abstract_sentences(p.abstract) for p in papers]
    pieces = iter(int(sum(e.attention_mask)) for e in tokenizer.encode_batch(
        [t for p, own in zip(papers, said) for t in (p.title + "\n", *own)], add_special_tokens=False))
    texts: list[str] = []
    spans: list[list[tuple[int, int]]] = []
    runs_of: list[list[tuple[int, int]]] = []
    for paper, own in zip(papers, said):
        head = paper.title + "\n"
        head_len = next(pieces)
        lengths = [next(pieces) + 1 for _ in own]
        runs = _passes(lengths, max(8, budget - head_len)) if own else []
        runs_of.append(runs)
        for start, end in runs:
            where, pos = [(0, len(paper.title))], len(head)
            for k in range(start, end):
                where.append((pos, pos + len(own[k])))
                pos += len(own[k]) + 1
            texts.append(head + " ".join(own[start:end]))
            spans.append(where)
    return said, texts, spans, runs_of


def _late(
    embed_model: Any, papers: Sequence[Paper], chunks: Sequence[Sequence[Chunk]], sentences: SentenceVectors | None
) -> list[list[float]]:
    """Chunk vectors from as few passes over each paper as the model's input limit allows (title +
    as many sentences as fit, usually one or two passes): a window's vector is the mean of the
    states of its title's and sentences' word pieces in that pass, an abstract sentence's the mean
    of its own ("late chunking"), and the title chunk's the title read alone. Every sentence is
    read once, in more context than its windows give it."""
    said, texts, spans, runs_of = late_passes(papers, embed_model.tokenizer, embed_model.max_length)
    sums, counts = embed_model.span_sums(texts, spans)
    titles, _ = embed_model.pooled_batch([p.title for p in papers])
    out: list[np.ndarray] = []
    kept: dict[str, np.ndarray] = {}
    alone: list[str] = []  # sentences the model's input limit cut off: read alone
    at = 0
    for i, (own, runs, mine) in enumerate(zip(said, runs_of, chunks)):
        head_sum: list[np.ndarray] = []
        head_n: list[float] = []
        sent_sum: list[np.ndarray] = []
        sent_n: list[float] = []
        run_of: list[int] = []
        for r, (start, end) in enumerate(runs):
            head_sum.append(sums[at + r][0])
            head_n.append(float(counts[at + r][0]))
            sent_sum.extend(sums[at + r][1:])
            sent_n.extend(float(n) for n in counts[at + r][1:])
            run_of.extend([r] * (end - start))
        at += len(runs)
        for k, text in enumerate(own):
            if sent_n[k]:
                kept[text] = sent_sum[k] / sent_n[k]
            else:
                alone.append(text)
        for chunk in mine:
            if chunk.kind == "title" or not runs:
                out.append(titles[i])
                continue
            start, end = chunk.span
            r = run_of[start]
            total = head_sum[r] + np.sum(sent_sum[start:end], axis=0)
            n = head_n[r] + sum(sent_n[start:end])
            out.append(total / n if n else titles[i])
    if sentences is not None:
        if alone:
            pooled, _ = embed_model.pooled_batch(alone)
            kept.update(zip(alone, pooled))
        if kept:
            sentences.put(list(kept), unit_rows(np.stack(list(kept.values()))))
    return list(unit_rows(np.stack(out)).tolist())


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
            chunker.vectors_of(embed_model, part, own, sentences)
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
            vectors = chunker.vectors_of(embed_model, batch, own, sentences)
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
