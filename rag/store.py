"""The Chroma collection that holds paper chunks: embedded PersistentClient or a `chroma run` server."""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence
from urllib.parse import urlparse

from .errors import StoreError
from .settings import StoreSettings
from .vectors import unit

logger = logging.getLogger(__name__)

PAGE = 2000


@dataclass
class PaperEntry:
    """What the store holds of one paper: its chunk ids and the hashes they were written with."""

    chunk_ids: list[str] = field(default_factory=list)
    hashes: set[str] = field(default_factory=set)
    expected_chunks: int = 0

    def is_complete(self, content_hash: str) -> bool:
        return self.hashes == {content_hash} and len(self.chunk_ids) == self.expected_chunks


def open_client(cfg: StoreSettings) -> Any:
    """A Chroma client for the configured location (telemetry off)."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    try:
        if cfg.chroma_url:
            url = urlparse(cfg.chroma_url)
            if not url.hostname:
                raise StoreError(f"RAG_STORE__CHROMA_URL is not a URL: {cfg.chroma_url!r}")
            client = chromadb.HttpClient(
                host=url.hostname,
                port=url.port or (443 if url.scheme == "https" else 8000),
                ssl=url.scheme == "https",
                settings=chroma_settings,
            )
            client.heartbeat()
            return client
        cfg.path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(cfg.path), settings=chroma_settings)
    except StoreError:
        raise
    except Exception as exc:  # chromadb raises many types for an unreachable or broken store
        where = cfg.chroma_url or str(cfg.path)
        raise StoreError(f"cannot open the Chroma store at {where}: {exc}") from exc


def chunk_paper_id(chunk_id: str) -> str:
    """Chunk ids are "<paper id>#<content hash>#<index>" (rag.ingest)."""
    return chunk_id.rsplit("#", 2)[0]


@dataclass(frozen=True)
class ModelRecord:
    """Which embedding model wrote a collection's vectors (kept in the collection's metadata).

    `name` is "bundled", or "adapted" for a model `rag adapt` trained for this store (kept in
    `<store path>/models/<fingerprint>`), or the path of a model the user configured."""

    name: str
    fingerprint: str


class PaperStore:
    """Paper-level operations over one Chroma collection of chunks."""

    def __init__(self, cfg: StoreSettings, collection: str | None = None):
        self.cfg = cfg
        self.client = open_client(cfg)
        self.name = collection or cfg.collection
        self.collection = self.client.get_or_create_collection(self.name, metadata={"hnsw:space": "cosine"})

    @property
    def models_dir(self) -> Path:
        """Where models adapted for this store live (next to an embedded store; locally for a server)."""
        return Path(self.cfg.path) / "models"

    def model_record(self) -> ModelRecord | None:
        meta = self.collection.metadata or {}
        if "embedding_fingerprint" not in meta:
            return None
        return ModelRecord(str(meta.get("embedding_model", "")), str(meta["embedding_fingerprint"]))

    def set_model_record(self, record: ModelRecord) -> None:
        # Chroma refuses metadata that restates the distance function; the collection keeps it.
        self.collection.modify(
            metadata={"embedding_model": record.name, "embedding_fingerprint": record.fingerprint}
        )

    def replace_with(self, other: PaperStore) -> None:
        """Make `other` (a fully written sibling collection) this store's collection, under this name.

        The old collection steps aside under another name and is dropped only once the new one has
        taken the name: at every moment one complete collection exists."""
        aside = f"{self.name}-previous"
        if aside in {c.name for c in self.client.list_collections()}:
            self.client.delete_collection(aside)  # left by an earlier interrupted swap
        self.collection.modify(name=aside)
        try:
            other.collection.modify(name=self.name)
        except Exception:
            self.collection.modify(name=self.name)  # put the old one back
            raise
        self.client.delete_collection(aside)
        self.collection = self.client.get_collection(self.name)
        other.name = self.name
        other.collection = self.collection

    def drop(self) -> None:
        self.client.delete_collection(self.name)

    @property
    def location(self) -> str:
        return self.cfg.chroma_url or str(self.cfg.path)

    def iter_records(self, include: list[str]) -> Iterator[tuple[str, dict[str, Any], str | None]]:
        """Every chunk as (id, metadata, document), paged so memory stays flat."""
        offset = 0
        while True:
            page = self.collection.get(include=include, limit=PAGE, offset=offset)
            ids = page["ids"]
            if not ids:
                return
            metas = page.get("metadatas") or [{}] * len(ids)
            docs = page.get("documents") or [None] * len(ids)
            yield from zip(ids, metas, docs)
            offset += len(ids)

    def manifest(self) -> dict[str, PaperEntry]:
        """paper id → its chunks in the store, to decide what an ingest must (re)write."""
        out: dict[str, PaperEntry] = defaultdict(PaperEntry)
        for cid, meta, _ in self.iter_records(["metadatas"]):
            entry = out[str(meta.get("paper_id"))]
            entry.chunk_ids.append(cid)
            entry.hashes.add(str(meta.get("content_hash")))
            entry.expected_chunks = int(meta.get("n_chunks", 0))
        return dict(out)

    def write(self, ids: list[str], embeddings: list[list[float]], metadatas: list[dict], documents: list[str]) -> None:
        """Upsert one batch of whole papers in a single Chroma call."""
        self.collection.upsert(ids=ids, embeddings=embeddings, metadatas=metadatas, documents=documents)

    def delete_chunks(self, ids: list[str]) -> None:
        if ids:
            self.collection.delete(ids=ids)

    def remove_paper(self, paper_id: str) -> int:
        """Delete every chunk of a paper; returns how many were deleted."""
        found = self.collection.get(where={"paper_id": paper_id}, include=[])
        self.delete_chunks(found["ids"])
        return len(found["ids"])

    def nearest_chunks(
        self, vector: Iterable[float], n: int, decisions: Sequence[str] | None = None, total: int | None = None
    ) -> list[tuple[str, float]]:
        """(paper id, cosine) of the n chunks nearest to a unit vector, best first.

        Only distances are fetched (the paper id is the chunk id's prefix): reading metadata and
        documents for hundreds of chunks would cost five times the search itself."""
        n = min(n, self.count_chunks() if total is None else total)
        if n <= 0:
            return []
        where: dict[str, Any] | None = None
        if decisions:
            where = {"decision": decisions[0]} if len(decisions) == 1 else {"decision": {"$in": list(decisions)}}
        found = self.collection.query(
            query_embeddings=[list(map(float, vector))], n_results=n, include=["distances"], where=where
        )
        ids, dists = found["ids"][0], found["distances"][0]
        return [(chunk_paper_id(cid), 1.0 - float(d)) for cid, d in zip(ids, dists)]

    def paper_vectors(self, paper_ids: Sequence[str]) -> dict[str, Any]:
        """paper id → the unit mean of its abstract-window vectors (all its vectors for older stores)."""
        import numpy as np

        ids = [p for p in dict.fromkeys(paper_ids) if p]
        if not ids:
            return {}
        where: dict[str, Any] = {"paper_id": ids[0]} if len(ids) == 1 else {"paper_id": {"$in": ids}}
        found = self.collection.get(where=where, include=["embeddings", "metadatas"])
        rows: dict[str, list[Any]] = defaultdict(list)
        windows: dict[str, list[Any]] = defaultdict(list)
        for meta, vec in zip(found["metadatas"] or [], found["embeddings"] if found["embeddings"] is not None else []):
            pid = str(meta.get("paper_id"))
            rows[pid].append(vec)
            if meta.get("kind") == "window":
                windows[pid].append(vec)
        out = {}
        for pid, vecs in rows.items():
            mean = np.mean(np.asarray(windows.get(pid) or vecs, dtype=np.float32), axis=0)
            out[pid] = unit(mean)
        return out

    def count_chunks(self) -> int:
        return int(self.collection.count())

    def paper_ids(self) -> set[str]:
        return {str(m.get("paper_id")) for _, m, _ in self.iter_records(["metadatas"])}
