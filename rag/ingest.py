"""Papers → llama-index nodes → embeddings → Chroma, incrementally and a whole paper at a time."""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from llama_index.core import Document
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import MetadataMode, TextNode
from llama_index.core.vector_stores.utils import node_to_metadata_dict

from .corpus import Paper
from .settings import IngestSettings
from .store import PaperStore

logger = logging.getLogger(__name__)

# Only the title joins the chunk text in the embedding and in BM25; the rest is metadata.
HIDDEN_KEYS = ["paper_id", "authors", "decision", "url", "content_hash", "chunk_index", "n_chunks"]


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


def paper_metadata(paper: Paper) -> dict[str, Any]:
    return {
        "paper_id": paper.id,
        "title": paper.title,
        "authors": "; ".join(paper.authors),
        "decision": paper.decision,
        "url": paper.url,
        "content_hash": paper.content_hash,
    }


def make_splitter(cfg: IngestSettings) -> SentenceSplitter:
    return SentenceSplitter(chunk_size=cfg.chunk_size, chunk_overlap=cfg.chunk_overlap)


def paper_nodes(paper: Paper, splitter: SentenceSplitter) -> list[TextNode]:
    """One node per abstract, or several sentence-aligned overlapping ones for a long abstract."""
    doc = Document(
        text=paper.abstract,
        id_=paper.id,
        metadata=paper_metadata(paper),
        excluded_embed_metadata_keys=HIDDEN_KEYS,
        excluded_llm_metadata_keys=HIDDEN_KEYS,
    )
    nodes = splitter.get_nodes_from_documents([doc])
    for i, node in enumerate(nodes):
        node.id_ = f"{paper.id}#{paper.content_hash}#{i}"
        node.metadata["chunk_index"] = i
        node.metadata["n_chunks"] = len(nodes)
        node.excluded_embed_metadata_keys = HIDDEN_KEYS
        node.excluded_llm_metadata_keys = HIDDEN_KEYS
    return nodes  # type: ignore[return-value]


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
    """Write new and changed papers; a paper's chunks are upserted in one call with its batch."""
    start = time.perf_counter()
    report = IngestReport()
    manifest = store.manifest()
    todo: list[Paper] = []
    for paper in papers:
        entry = manifest.get(paper.id)
        if entry is not None and entry.is_complete(paper.content_hash):
            report.unchanged += 1
        else:
            todo.append(paper)
    logger.info("%d papers unchanged, %d to write", report.unchanged, len(todo))
    splitter = make_splitter(cfg)
    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), unit="paper", desc="ingest", dynamic_ncols=True)
    try:
        for batch in _batches(todo, cfg.batch_papers):
            nodes = [n for p in batch for n in paper_nodes(p, splitter)]
            texts = [n.get_content(metadata_mode=MetadataMode.EMBED) for n in nodes]
            bulk = getattr(embed_model, "bulk", None)
            with bulk() if bulk else contextlib.nullcontext():
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
            stale = []
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
