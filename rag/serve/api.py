"""Request checks, answering and server-sent events shared by the native and OpenAI-compatible APIs."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rag.conversation import ChatTurn, chat_stream
from rag.events import Event, Final, Sources, final_answer
from rag.gate import GenerationGate
from rag.limits import check_request
from rag.settings import Decision, RetrieverMode, ServerSettings
from rag.types import Answer


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
        self.limits = cfg.limits()
        self.started = int(time.time())

    def events(self, req: AskRequest) -> Iterator[Event]:
        """Checked chat events."""
        check_request(req.question, req.history, req.top_k, self.limits)
        self.gate.check()
        return chat_stream(
            self.rag,
            req.question,
            req.history,
            top_k=req.top_k,
            decisions=req.decisions,
            retriever=req.retriever,
            gate=self.gate,
            limits=self.limits,
        )

    def primed(self, req: AskRequest) -> tuple[list[Event], Iterator[Event]]:
        """Run the request up to the retrieved sources, so waiting, store and input errors keep their status."""
        events = self.events(req)
        head: list[Event] = []
        for ev in events:
            head.append(ev)
            if isinstance(ev, (Sources, Final)):
                break
        return head, events

    def answer(self, req: AskRequest) -> Answer:
        """The full answer to a checked request."""
        return final_answer(self.events(req))


def sse(data: Any, event: str | None = None) -> str:
    """One server-sent event."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"


def chain_events(head: list[Event], rest: Iterator[Event]) -> Iterator[Event]:
    """The primed events, then the rest unless the head already holds the answer."""
    yield from head
    if not head or not isinstance(head[-1], Final):
        yield from rest


def close_events(events: Iterator[Any]) -> None:
    """Close an event generator, if it can be closed."""
    close = getattr(events, "close", None)
    if close is not None:
        close()


def stream_headers() -> dict[str, str]:
    """Headers of a server-sent event stream (no caching, no proxy buffering)."""
    return {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
