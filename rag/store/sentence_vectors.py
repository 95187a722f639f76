"""The abstracts' sentence vectors, computed at ingest and read by answers: a SQLite file beside the store.

An evidence answer chooses each paper's quote by the cosine of its sentences to the question, and
embedding those sentences was most of an answer's time (a list answer embeds ~40 sentences, an
author list every sentence of every paper). Ingest embeds every abstract sentence once, in bulk, and
keeps the vectors here; an answer reads them (a few milliseconds) and embeds only the question.

* **Content-addressed**: a row's key is a hash of (embedding model fingerprint, sentence text), so a
  row is never stale: a changed abstract or another embedding model (`rag adapt`) simply looks up
  other keys. Nothing here needs the store's lock or revision, and a failed ingest leaves only rows
  no one asks for yet.
* **A cache, not the truth**: a sentence without a row is embedded at answer time as before (and
  kept in the answer engine's in-memory cache); `rag ingest` of the same corpus fills missing rows.
* Vectors are stored as float16 (11 significant bits: cosines of unit vectors move by < 1e-3), as the
  in-memory cache keeps them.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

logger = logging.getLogger(__name__)

_CHUNK = 500  # keys per SELECT (SQLite's variable limit is 32,766; smaller keeps each query quick)


def embedder_key(model: Any) -> str:
    """The name sentence vectors of `model` are kept under: its weights' fingerprint."""
    fingerprint = getattr(model, "fingerprint", None)
    if isinstance(fingerprint, str) and fingerprint:
        return fingerprint
    return f"{type(model).__name__}:{getattr(model, 'model_name', '')}"


def _key(model: str, text: str) -> bytes:
    return hashlib.blake2b(f"{model}\0{text}".encode(), digest_size=16).digest()


class SentenceVectors:
    """Vectors of texts by one embedding model (named by `model`, its fingerprint), in a SQLite file."""

    def __init__(self, path: Path, model: str):
        self.path = Path(path)
        self.model = model
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self.unreadable = False

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("CREATE TABLE IF NOT EXISTS vectors(key BLOB PRIMARY KEY, vec BLOB NOT NULL) WITHOUT ROWID")
            self._conn = conn
        return self._conn

    def get(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored float32 vectors of those `texts` that have one. A file that cannot be read (a
        read-only mount that SQLite cannot open, a damaged file) is logged once and read as empty:
        answers then embed their quotes, as without this file."""
        if not texts or self.unreadable or not self.path.exists() and self._conn is None:
            return {}
        try:
            return self._get(texts)
        except sqlite3.Error as exc:
            self.unreadable = True
            logger.warning("sentence vectors at %s cannot be read (%s): quotes are embedded per answer", self.path, exc)
            return {}

    def _get(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        keyed = {_key(self.model, t): t for t in dict.fromkeys(texts)}
        keys = list(keyed)
        found: dict[str, np.ndarray] = {}
        with self._lock:
            db = self._db()
            for start in range(0, len(keys), _CHUNK):
                part = keys[start : start + _CHUNK]
                rows = db.execute(
                    f"SELECT key, vec FROM vectors WHERE key IN ({','.join('?' * len(part))})", part
                ).fetchall()
                for key, blob in rows:
                    found[keyed[key]] = np.frombuffer(blob, dtype=np.float16).astype(np.float32)
        return found

    def missing(self, texts: Iterable[str]) -> list[str]:
        """The texts (once each, in order) that have no stored vector."""
        unique = list(dict.fromkeys(texts))
        have = self.get(unique)
        return [t for t in unique if t not in have]

    def put(self, texts: Sequence[str], vectors: Sequence[Sequence[float]] | np.ndarray) -> None:
        """Store the vectors of `texts` (rows already present are kept)."""
        if len(texts) != len(vectors):
            raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
        rows = [
            (_key(self.model, t), np.asarray(v, dtype=np.float16).tobytes()) for t, v in zip(texts, vectors)
        ]
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany("INSERT OR IGNORE INTO vectors(key, vec) VALUES (?, ?)", rows)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def count(self) -> int:
        if not self.path.exists():
            return 0
        with self._lock:
            return int(self._db().execute("SELECT COUNT(*) FROM vectors").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
