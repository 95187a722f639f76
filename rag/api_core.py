"""Request checks, answering and server-sent events shared by the native and OpenAI-compatible APIs."""

import json
import logging
import time
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .chat import ChatTurn, GenerationGate, chat_stream
from .errors import InvalidRequestError, LLMUnavailableError
from .server_settings import ServerSettings
from .settings import Decision, RetrieverMode
from .types import Answer

logger = logging.getLogger(__name__)


class AskRequest(BaseModel):
    """A question, optionally with the conversation so far."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="The (follow-up) question.")
    history: list[ChatTurn] = Field(default_factory=list, description="Earlier messages, oldest first.")
    top_k: int | None = Field(
        default=None, description="Papers given to the LLM (default: RAG_RETRIEVAL__TOP_K)."
    )
    decisions: list[Decision] | None = Field(default=None, description="Only papers with these decisions.")
    retriever: RetrieverMode | None = Field(default=None, description="dense, bm25 or hybrid.")


class Api:
    """Request checks and answering shared by the native and the OpenAI-compatible endpoints."""

    def __init__(self, rag: Any, cfg: ServerSettings, gate: GenerationGate):
        self.rag = rag
        self.cfg = cfg
        self.gate = gate
        self.started = int(time.time())

    def check(self, question: str, history: Sequence[ChatTurn], top_k: int | None) -> str:
        """Apply the input limits; raises InvalidRequestError naming the limit."""
        q = (question or "").strip()
        if not q:
            raise InvalidRequestError("the question is empty")
        if len(q) > self.cfg.max_question_chars:
            raise InvalidRequestError(
                f"the question has {len(q)} characters; the limit is {self.cfg.max_question_chars}"
            )
        if len(history) > self.cfg.max_history_messages:
            raise InvalidRequestError(
                f"the history has {len(history)} messages; the limit is {self.cfg.max_history_messages}"
            )
        chars = sum(len(t.content) for t in history)
        if chars > self.cfg.max_history_chars:
            raise InvalidRequestError(
                f"the history has {chars} characters; the limit is {self.cfg.max_history_chars}"
            )
        if top_k is not None and not 1 <= top_k <= self.cfg.max_top_k:
            raise InvalidRequestError(f"top_k must be between 1 and {self.cfg.max_top_k}")
        return q

    def events(self, req: AskRequest) -> Iterator[dict[str, Any]]:
        """Checked chat events; the generator is advanced to its sources before a stream starts."""
        q = self.check(req.question, req.history, req.top_k)
        self.gate.check()
        return chat_stream(
            self.rag,
            q,
            req.history,
            top_k=req.top_k,
            decisions=req.decisions,
            retriever=req.retriever,
            gate=self.gate,
        )

    def primed(self, req: AskRequest) -> tuple[list[dict[str, Any]], Iterator[dict[str, Any]]]:
        """Run the request up to the retrieved sources, so waiting, store and input errors keep their status."""
        events = self.events(req)
        head: list[dict[str, Any]] = []
        for ev in events:
            head.append(ev)
            if ev["type"] in ("sources", "answer"):
                break
        return head, events

    def answer(self, req: AskRequest) -> Answer:
        """The full answer to a checked request."""
        for ev in self.events(req):
            if ev["type"] == "answer":
                return ev["answer"]
        raise LLMUnavailableError("the answer stream ended without an answer")


def sse(data: Any, event: str | None = None) -> str:
    """One server-sent event."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"


def chain_events(head: list[dict[str, Any]], rest: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The primed events, then the rest unless the head already holds the answer."""
    yield from head
    if not head or head[-1]["type"] != "answer":
        yield from rest


def close_events(events: Iterator[Any]) -> None:
    """Close an event generator, if it can be closed."""
    close = getattr(events, "close", None)
    if close is not None:
        close()


def stream_headers() -> dict[str, str]:
    """Headers of a server-sent event stream (no caching, no proxy buffering)."""
    return {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
