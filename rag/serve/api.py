"""Request checks, answering and server-sent events shared by the native and OpenAI-compatible APIs."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rag.chat.conversation import ChatTurn, chat_stream
from rag.errors import InvalidRequestError
from rag.events import Event, Final, Queued, Sources, final_answer
from rag.export import ExportFormat, TableFormat
from rag.limits import check_request
from rag.queue import GenerationQueue
from rag.settings import (
    SEARCH_OPTIONS,
    Decision,
    RetrieverMode,
    SearchOptions,
    ServerSettings,
    search_options,
)
from rag.text.followup import MAX_COMPARED
from rag.types import Answer, Citation

if TYPE_CHECKING:
    from rag.pipeline import RAG

# Request models are strict: a JSON value of another type than the schema's is a 400, never
# coerced ("3" is no top_k, 1 is no `stream`), so the OpenAPI schema says exactly what is accepted.
STRICT = ConfigDict(strict=True)


def check_text(value: object) -> None:
    """InvalidRequestError when a string in `value` holds a lone surrogate (a JSON `\\ud800` escape):
    such text cannot be embedded, stored or sent back as UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidRequestError("the request holds a lone surrogate (not a character)") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(key)
            check_text(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            check_text(item)


def json_numbers(value: Any) -> Any:
    """`value` with every integral float (`11.0`) as an int: JSON Schema's `integer` admits it, and
    the strict models would refuse it. Other types stay as they are (and strict)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: json_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_numbers(item) for item in value]
    return value


def request_json(data: Any) -> Any:
    """A request body's JSON as the strict models read it (see `check_text`, `json_numbers`)."""
    check_text(data)
    return json_numbers(data)


class HistoryCitation(Citation):
    """A citation of an earlier answer, as a request sends it back."""

    model_config = STRICT


class HistoryTurn(ChatTurn):
    """An earlier message of the conversation."""

    model_config = STRICT

    citations: list[HistoryCitation] = Field(  # type: ignore[assignment]
        default_factory=list, description="Citations of an assistant answer (optional)."
    )


class RequestOptions(BaseModel):
    """The retrieval options every answering request may carry, and the JSON checks of a request."""

    top_k: int | None = Field(
        default=None, description="Papers given to the LLM (default: RAG_RETRIEVAL__TOP_K)."
    )
    decisions: list[Decision] | None = Field(default=None, description="Only papers with these decisions.")
    retriever: RetrieverMode | None = Field(default=None, description="dense, bm25 or hybrid.")
    show_all: bool = Field(
        default=False,
        description="List every paper that meets the question (`Answer.matching_ids` counts them; "
        "without it a list answer shows the first top_k).",
    )

    @model_validator(mode="before")
    @classmethod
    def _text(cls, data: Any) -> Any:
        return request_json(data)

    def options(self) -> SearchOptions:
        """The request's options as the library takes them."""
        return search_options(self.model_dump(include=set(SEARCH_OPTIONS)))


class AskRequest(RequestOptions):
    """A question, optionally with the conversation so far. The limits (question length, history
    messages and characters, top_k) are the server's RAG_SERVER__MAX_*; /openapi.json states them."""

    model_config = ConfigDict(extra="forbid", strict=True)

    question: str = Field(
        description="The (follow-up) question: at least one non-space character, at most "
        "RAG_SERVER__MAX_QUESTION_CHARS characters."
    )
    history: list[HistoryTurn] = Field(
        default_factory=list,
        description="Earlier messages, oldest first: at most RAG_SERVER__MAX_HISTORY_MESSAGES, and "
        "at most RAG_SERVER__MAX_HISTORY_CHARS characters of content together.",
    )


class PermalinkRequest(RequestOptions):
    """A question and its options, to make a link that asks it again."""

    model_config = ConfigDict(extra="forbid", strict=True)

    question: str = Field(
        description="The standalone question: at least one non-space character, at most "
        "RAG_SERVER__MAX_QUESTION_CHARS characters."
    )


class PermalinkResponse(BaseModel):
    url: str = Field(description="The chat UI's link (`/?q=…`): opened, it asks the question again.")
    query: str = Field(description="The link's query string.")
    version: str = Field(description="What the answer is made from now (store, model, settings): a link "
                         "opened after they changed says so beside the answer.")


PaperId = Annotated[str, Field(min_length=1, max_length=100)]
API_MAX_PAPERS = 1_000  # per request: a request of that many ids stays under the body limit


class ExportRequest(BaseModel):
    """Stored papers to export, by id, in the order given."""

    model_config = ConfigDict(extra="forbid", strict=True)

    paper_ids: list[PaperId] = Field(
        min_length=1, max_length=API_MAX_PAPERS,
        description="OpenReview ids of stored papers (e.g. an answer's `citations[].paper_id` or "
        "`matching_ids`), at most 1,000 per request; an id the store does not hold is a 404 that "
        "names it.",
    )
    format: ExportFormat = Field("bibtex", description="bibtex, csv, markdown or json.")

    @model_validator(mode="before")
    @classmethod
    def _text(cls, data: Any) -> Any:
        return request_json(data)


class CompareRequest(BaseModel):
    """Two to six stored papers to compare, by id, in the order of the table's rows."""

    model_config = ConfigDict(extra="forbid", strict=True)

    paper_ids: list[PaperId] = Field(
        min_length=2, max_length=MAX_COMPARED, json_schema_extra={"uniqueItems": True},
        description="OpenReview ids of 2 to 6 different stored papers; an id the store does not hold is a "
        "404 that names it.",
    )
    format: TableFormat = Field("json", description="json (the rows), csv or markdown.")

    @field_validator("paper_ids")
    @classmethod
    def _different(cls, ids: list[str]) -> list[str]:
        if len(set(ids)) < len(ids):
            raise ValueError("the ids must be different papers")
        return ids

    @model_validator(mode="before")
    @classmethod
    def _text(cls, data: Any) -> Any:
        return request_json(data)


class Api:
    """Request checks and answering shared by the native and the OpenAI-compatible endpoints."""

    def __init__(self, rag: RAG, cfg: ServerSettings, queue: GenerationQueue):
        self.rag = rag
        self.cfg = cfg
        self.queue = queue
        self.limits = cfg.limits()
        self.started = int(time.time())

    def events(self, req: AskRequest) -> Iterator[Event]:
        """Checked chat events."""
        check_request(req.question, req.history, req.top_k, self.limits)
        self.queue.check()
        return chat_stream(self.rag, req.question, req.history, self.queue, self.limits, **req.options())

    def primed(self, req: AskRequest) -> tuple[list[Event], Iterator[Event]]:
        """Run the request up to its place in line or its retrieved sources, so a full line, store
        and input errors keep their HTTP status (a wait that times out is then an error event)."""
        events = self.events(req)
        head: list[Event] = []
        for ev in events:
            head.append(ev)
            if isinstance(ev, (Queued, Sources, Final)):
                break
        return head, events

    def permalink(self, req: PermalinkRequest, base: str) -> PermalinkResponse:
        """The checked request's link on the UI at `base`."""
        check_request(req.question, [], req.top_k, self.limits)
        link = self.rag.permalink(req.question, **req.options())
        return PermalinkResponse(url=link.url(base), query=link.query(), version=link.version)

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
