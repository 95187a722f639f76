"""Vector normalising, in one place: a dot product of the results is a cosine similarity."""

from __future__ import annotations

import threading
from collections import OrderedDict
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
    return arr / np.maximum(np.linalg.norm(arr, axis=1, keepdims=True), EPS)


class VectorCache:
    """Vectors of texts for one embedding model, kept across answers: the abstracts' sentences recur
    in many answers, and embedding them is most of an evidence answer's CPU. Bounded (least recently
    used out first); a different model empties it. Thread-safe; texts are embedded outside the lock."""

    def __init__(self, max_items: int = 20_000):
        self.max_items = max_items
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()
        self._model: Any = None
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def embed(self, model: Any, texts: list[str]) -> list[np.ndarray]:
        """The vectors of `texts` by `model` (a llama-index embedding: get_text_embedding_batch)."""
        with self._lock:
            if model is not self._model:
                self._items.clear()
                self._model = model
            found = {t: self._items[t] for t in texts if t in self._items}
            for t in found:
                self._items.move_to_end(t)
        todo = list(dict.fromkeys(t for t in texts if t not in found))
        fresh = [np.asarray(v, dtype=np.float32) for v in model.get_text_embedding_batch(todo)] if todo else []
        with self._lock:
            self.hits += len(texts) - len(todo)
            self.misses += len(todo)
            if model is self._model:
                for t, v in zip(todo, fresh):
                    self._items[t] = v
                while len(self._items) > self.max_items:
                    self._items.popitem(last=False)
        found.update(zip(todo, fresh))
        return [found[t] for t in texts]
