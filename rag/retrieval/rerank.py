"""Optional listwise reranking of the top fused papers by the LLM (`RAG_RETRIEVAL__RERANK=llm`).

The LLM sees the question and the top `rerank_depth` papers (title and first sentences) numbered,
and replies with the numbers in order. Its reply is parsed tolerantly: numbers out of range or
repeated are ignored, and papers it leaves out keep their fused order after the ones it ranked. A
reply with no usable number, or a failed call, keeps the fused order and says so in the result's
notes: the reranker never hides its own failure.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from llama_index.core.llms import LLM, ChatMessage

from rag import prompts
from rag.text.citations import split_sentences

logger = logging.getLogger(__name__)

_NUMBER = re.compile(r"\d{1,3}")
HEAD_SENTENCES = 2
MAX_REPLY_CHARS = 2000


def parse_order(reply: str, n: int) -> list[int]:
    """1-based paper numbers in the order the reply gives them (valid and first occurrence only)."""
    seen: list[int] = []
    for m in _NUMBER.finditer(reply[:MAX_REPLY_CHARS]):
        k = int(m.group())
        if 1 <= k <= n and k not in seen:
            seen.append(k)
    return seen


@dataclass
class Reranked:
    order: list[str]
    note: str


class LLMReranker:
    """Reorders candidate papers with one LLM call."""

    def __init__(self, llm: LLM):
        self.llm = llm

    def prompt(self, question: str, papers: Sequence[tuple[str, str]]) -> str:
        lines = []
        for i, (title, text) in enumerate(papers, start=1):
            head = " ".join(split_sentences(text)[:HEAD_SENTENCES])
            lines.append(f"[{i}] {title}. {head}")
        return prompts.render("rerank", question=question, papers="\n".join(lines))

    def __call__(self, question: str, ids: Sequence[str], papers: Sequence[tuple[str, str]]) -> Reranked:
        """`ids` in the LLM's order (the unranked ones after, in their order)."""
        if len(ids) < 2:
            return Reranked(list(ids), "")
        try:
            reply = self.llm.chat([ChatMessage(role="user", content=self.prompt(question, papers))])
            text = reply.message.content or ""
        except Exception as exc:  # noqa: BLE001 - any endpoint failure keeps the fused order, visibly
            logger.warning("LLM rerank failed: %s", exc)
            return Reranked(list(ids), f"LLM rerank failed ({type(exc).__name__}); fused order kept")
        order = parse_order(text, len(ids))
        if not order:
            logger.warning("LLM rerank reply had no usable paper number: %r", text[:200])
            return Reranked(list(ids), "LLM rerank reply was unusable; fused order kept")
        ranked = [ids[k - 1] for k in order]
        rest = [p for p in ids if p not in set(ranked)]
        return Reranked(ranked + rest, f"Top {len(ids)} reranked by the LLM ({len(order)} ranked by it)")
