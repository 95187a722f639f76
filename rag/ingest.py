"""Papers → chunks (rag.chunking) → embeddings → Chroma, incrementally and a whole paper at a time."""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.schema import MetadataMode, TextNode
from llama_index.core.vector_stores.utils import node_to_metadata_dict

from .chunking import Chunk, TokenCounter, paper_chunks, scheme, token_counter
from .corpus import Paper
from .settings import IngestSettings
from .store import PaperStore

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

    @classmethod
    def for_model(cls, embed_model: BaseEmbedding, cfg: IngestSettings) -> Chunker:
        count, limit = token_counter(embed_model)
        return cls(cfg.window_sentences, cfg.window_stride, count, limit)

    @property
    def scheme(self) -> str:
        return scheme(self.window, self.stride, self.max_tokens)

    def chunks(self, paper: Paper) -> list[Chunk]:
        return paper_chunks(paper.title, paper.abstract, self.window, self.stride, self.max_tokens, self.count)

    def nodes(self, paper: Paper) -> list[tuple[TextNode, str]]:
        """The paper's chunks as (llama-index node whose text is the stored document, text to embed)."""
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
            nodes.append((node, chunk.embed_text))
        return nodes


def expected_hash(paper: Paper, chunker: Chunker) -> str:
    return f"{paper.content_hash}/{chunker.scheme}"


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
    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), unit="paper", desc="ingest", dynamic_ncols=True)
    try:
        for batch in _batches(todo, cfg.batch_papers):
            pairs = [pair for p in batch for pair in chunker.nodes(p)]
            nodes = [n for n, _ in pairs]
            texts = [t for _, t in pairs]
            bulk = getattr(embed_model, "bulk", None)
            with bulk() if bulk else contextlib.nullcontext():  # the embedder batches by length
                vectors = embed_model.get_text_embedding_batch(texts)
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
    report.seconds = time.perf_counter() - start
    return report
