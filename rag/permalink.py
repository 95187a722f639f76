"""Links that ask a question again: `/?q=…&decision=Oral&top_k=5&retriever=bm25&all=1&v=…`.

A link holds the question and the request options, and `v`, a short digest of what the answer was
made from (the store's revision and chunk count, the embedding model and the answer settings). Opened
while `v` still matches, the answer is the same one (the answer cache holds it); when the papers,
the model or the settings changed since, the product says so next to today's answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args
from urllib.parse import urlencode

from rag.errors import InvalidRequestError
from rag.settings import DECISIONS, RetrieverMode, SearchOptions

RETRIEVERS: tuple[str, ...] = get_args(RetrieverMode)
CHANGED_NOTICE = ("This link was made on other papers, another embedding model or other settings than the "
                  "store has now: the answer below is today's and may differ from the one that was shared.")


@dataclass(frozen=True)
class Permalink:
    """A question and its request options, as a link's query string."""

    question: str
    top_k: int | None = None
    decisions: tuple[str, ...] = ()
    retriever: RetrieverMode | None = None
    show_all: bool = False
    version: str = ""

    @classmethod
    def of(cls, question: str, options: SearchOptions, version: str = "") -> Permalink:
        """The link of `question` (whitespace folded) asked with `options`."""
        return cls(
            " ".join(question.split()), options.get("top_k"), tuple(options.get("decisions") or ()),
            options.get("retriever"), options.get("show_all", False), version,
        )

    def query(self) -> str:
        """`q=…&decision=…&top_k=…&retriever=…&all=1&v=…` (options left at their default are left out)."""
        pairs: list[tuple[str, str]] = [("q", self.question)]
        if self.decisions:
            pairs.append(("decision", ",".join(self.decisions)))
        if self.top_k is not None:
            pairs.append(("top_k", str(self.top_k)))
        if self.retriever:
            pairs.append(("retriever", self.retriever))
        if self.show_all:
            pairs.append(("all", "1"))
        if self.version:
            pairs.append(("v", self.version))
        return urlencode(pairs)

    def url(self, base: str) -> str:
        """The link on the chat UI at `base` (e.g. http://127.0.0.1:7860/)."""
        return base.rstrip("/") + "/?" + self.query()

    @classmethod
    def parse(cls, params: Mapping[str, str | Sequence[str]], max_question_chars: int = 4000) -> Permalink | None:
        """The link in a URL's query parameters (None without `q`); InvalidRequestError saying which
        value is wrong."""

        def values(name: str) -> list[str]:
            v = params.get(name)
            return [] if v is None else [v] if isinstance(v, str) else list(v)

        question = " ".join(values("q")).strip()
        if not question:
            return None
        if len(question) > max_question_chars:
            raise InvalidRequestError(f"the link's question is longer than {max_question_chars} characters")
        decisions = tuple(d for raw in values("decision") for d in raw.split(",") if d)
        if bad := [d for d in decisions if d not in DECISIONS]:
            raise InvalidRequestError(f"the link's decision {bad[0]!r} is not one of {', '.join(DECISIONS)}")
        top_k: int | None = None
        if raw_k := values("top_k"):
            if not raw_k[0].isdigit() or int(raw_k[0]) < 1:
                raise InvalidRequestError(f"the link's top_k {raw_k[0]!r} is not a positive whole number")
            top_k = int(raw_k[0])
        retriever = (values("retriever") or [""])[0] or None
        if retriever is not None and retriever not in RETRIEVERS:
            raise InvalidRequestError(f"the link's retriever {retriever!r} is not one of {', '.join(RETRIEVERS)}")
        show_all = (values("all") or ["0"])[0].lower() in ("1", "true", "yes")
        return cls(question, top_k, decisions, retriever, show_all, (values("v") or [""])[0][:32])  # type: ignore[arg-type]


def version_of(stamp: Any, model_fingerprint: str | None, settings: Any) -> str:
    """A short digest of what an answer depends on besides the question: the store's revision and
    size, the embedding model, the retrieval and answer settings and the LLM."""
    parts = {
        "store": list(stamp) if stamp is not None else None,
        "model": model_fingerprint,
        "retrieval": settings.retrieval.model_dump(mode="json"),
        "answer": settings.answer.model_dump(mode="json", exclude={"cache_size"}),
        "llm": settings.llm.display_name,
    }
    return hashlib.blake2b(json.dumps(parts, sort_keys=True).encode(), digest_size=6).hexdigest()
