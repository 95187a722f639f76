"""The answer cache: a repeated question is answered from memory, with the same sources and citations.

The key holds everything an answer depends on: the standalone question (whitespace folded), the
request's options (top_k, decision filter, retriever), the retrieval, answer, embedding and LLM
settings, and the store's stamp (its revision and chunk count). Any ingest, remove or adapt, in
this process or another, changes the stamp, so entries made before it are never served again;
they age out of the bounded LRU. Size: RAG_ANSWER__CACHE_SIZE answers (0 turns the cache off).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from typing import Any

from rag.settings import SearchOptions, Settings
from rag.types import Answer


def cache_key(question: str, options: SearchOptions, settings: Settings, stamp: Any) -> str:
    """A digest of everything the answer to `question` depends on (see the module docstring)."""
    decisions = options.get("decisions")
    parts = {
        "q": re.sub(r"\s+", " ", question).strip(),
        "top_k": options.get("top_k"),
        "decisions": sorted(decisions) if decisions else None,
        "retriever": options.get("retriever"),
        "all": options.get("show_all", False),
        "retrieval": settings.retrieval.model_dump(mode="json"),
        "answer": settings.answer.model_dump(mode="json", exclude={"cache_size"}),
        "embedding": settings.embedding.model_dump(mode="json", exclude={"batch_size"}),
        "llm": [settings.llm.display_name, settings.llm.max_tokens, settings.llm.temperature]
        + ([] if settings.llm.is_remote else [settings.llm.local_weights, settings.llm.flash_attn]),
        "store": [settings.store.chroma_url or str(settings.store.path), settings.store.collection, list(stamp)],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


class AnswerCache:
    """At most `size` answers, least recently used out first; thread-safe."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[str, Answer] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: str) -> Answer | None:
        """A copy of the answer stored under `key` (the caller may change it), or None."""
        if self.size <= 0:
            return None
        with self._lock:
            answer = self._items.get(key)
            if answer is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
        return answer.model_copy(deep=True)

    def put(self, key: str, answer: Answer) -> None:
        """Keep a copy of a finished answer."""
        if self.size <= 0:
            return
        stored = answer.model_copy(deep=True)
        with self._lock:
            self._items[key] = stored
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"size": self.size, "entries": len(self._items), "hits": self.hits, "misses": self.misses}
