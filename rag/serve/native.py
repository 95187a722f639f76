"""The native HTTP API: POST /api/ask (JSON answer), /api/ask/stream (server-sent events),
/api/export (papers as BibTeX, CSV, Markdown or JSON), /api/compare, and GET /api/papers/{id} and
/api/map (the map of the field)."""

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Annotated, Any, Literal

from rag.errors import GenerationCancelled, RagError
from rag.events import Condensed, Event, Final, Queued, Sources, Token
from rag.export import EXTENSIONS, FORMATS, MEDIA_TYPES, TABLE_FIELDS, TABLE_FORMATS
from rag.fieldmap import MAX_HIGHLIGHT, check_highlight
from rag.pipeline import MAX_NEIGHBOURS
from rag.serve.api import (
    Api,
    AskRequest,
    CompareRequest,
    ExportRequest,
    PermalinkRequest,
    PermalinkResponse,
    chain_events,
    close_events,
    sse,
    stream_headers,
)
from rag.serve.errors import error_event, error_responses
from rag.serve.streaming import cancellable_stream, stream_failed
from rag.types import Answer

if TYPE_CHECKING:
    from fastapi import FastAPI


def add_native_routes(app: "FastAPI", api: Api, dependencies: list[Any], responses: dict[int | str, Any]) -> None:
    """Register /api/ask and /api/ask/stream on `app`."""
    from fastapi import Query, Request, Response
    from fastapi.responses import StreamingResponse

    @app.post("/api/ask", response_model=Answer, tags=["api"], dependencies=dependencies, responses=responses)
    def ask(req: AskRequest, response: Response) -> Answer:
        """Answer a question (with optional chat history) with validated citations. The header
        `X-RAG-Cache` says whether it came from the answer cache (hit, miss, off)."""
        answer = api.answer(req)
        response.headers["X-RAG-Cache"] = answer.timings.cache
        return answer

    @app.post("/api/ask/stream", tags=["api"], dependencies=dependencies, responses=responses)
    def ask_stream(req: AskRequest) -> Any:
        """Server-sent events: `queued`... (place in line, while waiting), `condensed`, `sources`,
        `token`..., then `answer` (or `error`)."""
        head, events = api.primed(req)
        return StreamingResponse(
            ask_events(head, events), media_type="text/event-stream", headers=stream_headers()
        )


    export_body = {"type": "string", "description": "The papers in the asked format."}
    json_body = {"type": "array", "items": {"type": "object", "required": ["paper_id", "title", "authors", "decision", "url"]}}

    @app.post(
        "/api/export", tags=["api"], dependencies=dependencies, response_class=Response,
        responses={
            **responses,
            **error_responses(404),
            200: {
                "description": "The papers as a file (`Content-Disposition: attachment`), in the order asked.",
                "content": {MEDIA_TYPES[f]: {"schema": json_body if f == "json" else export_body} for f in FORMATS},
            },
        },
    )
    def export(req: ExportRequest) -> Response:
        """Stored papers by id as BibTeX (`@inproceedings`, ICLR 2025), CSV, Markdown or JSON."""
        text = api.rag.export(req.paper_ids, req.format)
        name = f"iclr2025-papers.{EXTENSIONS[req.format]}"
        return Response(text, media_type=f"{MEDIA_TYPES[req.format]}; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.get(
        "/api/papers/{paper_id}", response_model=Answer, tags=["api"], dependencies=dependencies,
        responses={**responses, **error_responses(404)},
    )
    def paper(paper_id: str, neighbours: Annotated[int, Query(ge=0, le=MAX_NEIGHBOURS)] = 5) -> Answer:
        """A stored paper's page (`RAG.paper_page`): its title, authors, decision, link and abstract as
        source [1], then its `neighbours` (0-20) nearest papers as [2]…"""
        return api.rag.paper_page(paper_id, neighbours)

    @app.post("/api/permalink", response_model=PermalinkResponse, tags=["api"], dependencies=dependencies,
              responses=responses)
    def permalink(req: PermalinkRequest, request: Request) -> PermalinkResponse:
        """A link to the chat UI that asks this question again with these options (`RAG.permalink`):
        the same answer while the store, model and settings are unchanged, and a notice when they
        changed since."""
        return api.permalink(req, str(request.base_url))

    map_types = {"json": "application/json", "svg": "image/svg+xml", "html": "text/html", "png": "image/png"}

    @app.get(
        "/api/map", tags=["api"], dependencies=dependencies, response_class=Response,
        responses={
            **responses,
            200: {
                "description": "The map: JSON (points in [0, 1]² with their cluster, labelled clusters), or the "
                "chart as SVG, an interactive HTML page (hover a point: its title; click: its paper page) or PNG.",
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/FieldMap"}},
                    "image/svg+xml": {"schema": {"type": "string"}},
                    "text/html": {"schema": {"type": "string"}},
                    "image/png": {"schema": {"type": "string", "format": "binary"}},
                },
            },
        },
    )
    def field_map(
        request: Request,
        format: Annotated[Literal["json", "svg", "html", "png"], Query(description="json, svg, html or png")] = "json",
        highlight: Annotated[list[str], Query(max_length=MAX_HIGHLIGHT,
                                              description="paper ids to pick out (an answer's papers)")] = [],  # noqa: B006
    ) -> Response:
        """A map of the field (`RAG.field_map`): every stored paper placed in 2D from its stored
        vector, in clusters labelled by their distinctive words; computed once per store revision,
        then read from where it is kept. In the drawn forms a point links to its paper page here."""
        fmap = api.rag.field_map()
        picked = check_highlight(highlight)
        base = str(request.base_url)
        body = fmap.render(format, picked, link=lambda pid: f"{base}?paper={pid}")
        if isinstance(body, bytes):
            return Response(body, media_type=map_types[format])
        return Response(body, media_type=f"{map_types[format]}; charset=utf-8")

    rows_body = {"type": "array", "items": {"type": "object", "required": list(TABLE_FIELDS)}}
    table_body = {"type": "string", "description": "The comparison table in the asked format."}

    @app.post(
        "/api/compare", tags=["api"], dependencies=dependencies, response_class=Response,
        responses={
            **responses,
            **error_responses(404),
            200: {
                "description": "One row per paper in the order asked: problem, method, data and result, "
                "each a sentence of that abstract or empty.",
                "content": {MEDIA_TYPES[f]: {"schema": rows_body if f == "json" else table_body} for f in TABLE_FORMATS},
            },
        },
    )
    def compare(req: CompareRequest) -> Response:
        """A comparison table of 2 to 6 stored papers (the table `RAG.compare` gives) as JSON, CSV or
        Markdown."""
        text = api.rag.compare(req.paper_ids).comparison_table(req.format)
        return Response(text, media_type=f"{MEDIA_TYPES[req.format]}; charset=utf-8")


def ask_events(head: list[Event], events: Iterator[Event]) -> AsyncIterator[str]:
    """The native stream: each event's fields as the data of an SSE event named by its type. A
    client that goes away stops the generation (rag.serve.streaming)."""
    return cancellable_stream(_ask_lines(head, events))


def _ask_lines(head: list[Event], events: Iterator[Event]) -> Iterator[str]:
    try:
        for ev in chain_events(head, events):
            if isinstance(ev, Queued):
                yield sse(ev.model_dump(mode="json", exclude={"type"}) | {"message": ev.message}, ev.type)
            elif isinstance(ev, Condensed):
                yield sse(ev.model_dump(mode="json", exclude={"type"}), ev.type)
            elif isinstance(ev, Sources):
                yield sse(ev.model_dump(mode="json", exclude={"type"}), ev.type)
            elif isinstance(ev, Token):
                yield sse({"text": ev.text}, ev.type)
            elif isinstance(ev, Final):
                yield sse(ev.answer.model_dump(mode="json"), ev.type)
    except GenerationCancelled:
        return  # nobody is listening any more
    except RagError as exc:
        stream_failed(exc)
        yield sse(error_event(exc), "error")
    finally:
        close_events(events)
