"""Typed streaming events: what `RAG.stream`, `RAG.chat_stream` and the HTTP client yield.

A stream is `Queued`... (while it waits for a generation slot; only behind a queue), `Condensed?`
(conversations only), `Sources`, `Token`..., then `Final` (or `Error` when a client reads a server's
stream). `final_answer` drains any stream to its answer; it is the only
loop that does so.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from rag.errors import LLMUnavailableError, RagError, error_from
from rag.types import Answer, Source


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)


class Queued(_Event):
    """The request waits in line for a generation slot (sent again whenever its place changes)."""

    type: Literal["queued"] = "queued"
    ahead: int = Field(description="Requests served before this one (waiting or being answered).")
    eta_s: float | None = Field(
        default=None, description="Estimated seconds until this one is answered (None: not yet measured)."
    )

    @property
    def message(self) -> str:
        """'2 questions ahead of you, ~12 s'."""
        from rag.queue import QueueStatus

        return QueueStatus(self.ahead, self.eta_s).message()


class Condensed(_Event):
    """The standalone question a follow-up was rewritten to, and how."""

    type: Literal["condensed"] = "condensed"
    standalone_question: str
    method: Literal["none", "rule", "llm", "fallback", "followup"]


class Sources(_Event):
    """The retrieved papers, numbered as the answer cites them."""

    type: Literal["sources"] = "sources"
    sources: list[Source]


class Token(_Event):
    """A piece of answer text (only text the final answer shows)."""

    type: Literal["token"] = "token"
    text: str


class Final(_Event):
    """The validated answer; the last event of a successful stream."""

    type: Literal["answer"] = "answer"
    answer: Answer


class Error(_Event):
    """A failure reported inside a stream (server-sent streams; the library raises instead)."""

    type: Literal["error"] = "error"
    kind: str = Field(description="Error type, as in the HTTP error body.")
    message: str
    status: int | None = None

    def exception(self) -> RagError:
        """The library exception this error stands for."""
        return error_from(self.kind, self.message)


Event = Annotated[Union[Queued, Condensed, Sources, Token, Final, Error], Field(discriminator="type")]


def final_answer(events: Iterable[Event]) -> Answer:
    """Drain a stream to its answer; an `Error` event is raised as its exception."""
    for event in events:
        if isinstance(event, Final):
            return event.answer
        if isinstance(event, Error):
            raise event.exception()
    raise LLMUnavailableError("the answer stream ended without an answer")


def replay(answer: Answer) -> Iterator[Event]:
    """A finished (cached) answer as a stream: `Sources`, one `Token`, `Final`."""
    yield Sources(sources=answer.sources)
    yield Token(text=answer.text)
    yield Final(answer=answer)
