"""Vector normalising, in one place: a dot product of the results is a cosine similarity."""

from __future__ import annotations

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
