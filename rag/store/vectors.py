"""Vector normalising, in one place: a dot product of the results is a cosine similarity."""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

EPS = 1e-12


def unit(vector: Any) -> np.ndarray:
    """One vector scaled to length 1 (a zero vector stays zero)."""
    arr = np.asarray(vector, dtype=np.float32)
    return arr / max(float(np.linalg.norm(arr)), EPS)


def unit_rows(vectors: Any) -> np.ndarray:
    """Vectors as a float32 matrix of unit rows."""
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.size == 0:
        return arr.reshape(0, 0)
    out: np.ndarray = arr / np.maximum(np.linalg.norm(arr, axis=1, keepdims=True), EPS)
    return out


class VectorCache:
    """Vectors of texts for one embedding model, kept across answers: the abstracts' sentences recur
    in many answers, and embedding them is most of an evidence answer's CPU. Bounded (least recently
    used out first); a different model empties it. Thread-safe; texts are embedded outside the lock.

    The vectors are kept as rows of one float16 matrix (~0.8 KB a vector instead of ~1.7 KB as
    separate float32 arrays; a row freed by the LRU is reused, so the cache stops growing once it is
    full). Every vector it returns is rounded to float16, fresh or cached, so an answer does not
    depend on what was cached before (11 significant bits: cosines of unit vectors move by < 1e-3)."""

    def __init__(self, max_items: int = 20_000, stored: Path | None = None):
        self.max_items = max_items
        self.stored_path = stored  # the store's sentence vectors (rag.store.sentence_vectors), read before embedding
        self._stored: Any = None
        self._rows: OrderedDict[str, int] = OrderedDict()  # text → row of _matrix, least recent first
        self._matrix: np.ndarray | None = None
        self._free: list[int] = []
        self._model: Any = None
        self._lock = threading.Lock()
        self.hits = self.misses = self.stored_hits = 0

    def __len__(self) -> int:
        return len(self._rows)

    def _store(self, text: str, vector: np.ndarray) -> None:
        if self._matrix is None or self._matrix.shape[1] != vector.shape[0]:
            self._matrix = np.empty((0, vector.shape[0]), dtype=np.float16)
            self._rows.clear()
            self._free = []
        if not self._free:
            if len(self._rows) >= self.max_items:
                _, row = self._rows.popitem(last=False)
                self._free.append(row)
            else:  # grow by half (at most to max_items): amortised copies, no unused tail when small
                old = self._matrix.shape[0]
                new = min(self.max_items, max(256, old + old // 2))
                grown = np.empty((new, self._matrix.shape[1]), dtype=np.float16)
                grown[:old] = self._matrix
                self._matrix = grown
                self._free.extend(range(new - 1, old - 1, -1))
        row = self._free.pop()
        self._matrix[row] = vector
        self._rows[text] = row

    def embed(self, model: Any, texts: list[str]) -> list[np.ndarray]:
        """The vectors of `texts` by `model` (a llama-index embedding: get_text_embedding_batch),
        as float32 arrays."""
        with self._lock:
            if model is not self._model:
                self._rows.clear()
                self._matrix, self._free = None, []
                self._model = model
                self._stored = None
                if self.stored_path is not None:
                    from rag.store.sentence_vectors import SentenceVectors, embedder_key

                    self._stored = SentenceVectors(self.stored_path, embedder_key(model))
            stored = self._stored
            found: dict[str, np.ndarray] = {}
            for t in texts:
                row = self._rows.get(t)
                if row is not None and self._matrix is not None:
                    found[t] = self._matrix[row].astype(np.float32)
                    self._rows.move_to_end(t)
        todo = list(dict.fromkeys(t for t in texts if t not in found))
        read: dict[str, np.ndarray] = {}
        if todo and stored is not None:  # computed at ingest: read, not embedded
            read = stored.get(todo)
            found.update(read)
            todo = [t for t in todo if t not in read]
        fresh = [
            np.asarray(v, dtype=np.float16).astype(np.float32) for v in model.get_text_embedding_batch(todo)
        ] if todo else []
        with self._lock:
            self.hits += len(texts) - len(todo) - len(read)
            self.stored_hits += len(read)
            self.misses += len(todo)
            if model is self._model:
                for t, v in [*read.items(), *zip(todo, fresh)]:
                    if t not in self._rows:
                        self._store(t, v)
        found.update(zip(todo, fresh))
        return [found[t] for t in texts]
