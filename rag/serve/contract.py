"""The OpenAPI document of the server (GET /openapi.json), exact for the limits it runs with.

FastAPI derives the request and response schemas from the models; this module adds what the models
cannot know or state: the server's limits (RAG_SERVER__MAX_*: question length, history size, top_k),
"at least one non-space character" for a question, "at least one user message" for a chat
completion, server-sent events as the streaming routes' 200, and no 422 (invalid input is a 400 with
the `{"error": ...}` body). What JSON Schema cannot state is said in the descriptions: the history's
characters together (RAG_SERVER__MAX_HISTORY_CHARS), and the joined text of a user message sent as
several text parts.
"""

from __future__ import annotations

from typing import Any

from rag.events import Condensed, Queued, Sources, Token
from rag.limits import Limits

NON_BLANK = r"\S"  # at least one character that str.strip() keeps
REF = "#/components/schemas/{model}"


def install_openapi(app: Any, limits: Limits) -> None:
    """Make `app.openapi()` (and so /openapi.json and /docs) return the exact document."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = exact(generate(), limits)
        schema: dict[str, Any] = app.openapi_schema
        return schema

    app.openapi = openapi


def _ref(name: str) -> dict[str, str]:
    return {"$ref": REF.format(model=name)}


# -- server-sent events: in Open API 3.1 the `schema` of text/event-stream describes one event, an
# object with `event` and `data` (a string); `contentSchema` states the JSON inside `data`.
def _json_data(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "string", "contentMediaType": "application/json", "contentSchema": schema}


def _event(name: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["event", "data"],
        "properties": {"event": {"const": name}, "data": _json_data(data)},
    }


def _model(model: Any) -> dict[str, Any]:
    schema: dict[str, Any] = model.model_json_schema(ref_template=REF, mode="serialization")
    schema.pop("$defs", None)  # their models are in the document's components already
    schema["properties"].pop("type", None)  # the event's name says it
    return schema


def _stream_error(code_field: str) -> dict[str, Any]:
    detail = {
        "type": "object",
        "required": ["type", "message", code_field],
        "properties": {
            "type": {"type": "string"},
            "message": {"type": "string"},
            code_field: {"type": "integer"},
        },
    }
    return {"type": "object", "required": ["error"], "properties": {"error": detail}}


def _queued() -> dict[str, Any]:
    """The `queued` event: the Queued fields and the message the UI shows."""
    schema = _model(Queued)
    schema["properties"]["message"] = {"type": "string", "description": "e.g. '2 questions ahead of you, ~12 s'."}
    schema.setdefault("required", []).append("message")
    return schema


def native_events() -> dict[str, Any]:
    """One event of /api/ask/stream."""
    return {
        "oneOf": [
            _event("queued", _queued()),
            _event("condensed", _model(Condensed)),
            _event("sources", _model(Sources)),
            _event("token", _model(Token)),
            _event("answer", _ref("Answer")),
            _event("error", _stream_error("status")),
        ]
    }


def openai_events() -> dict[str, Any]:
    """One event of /v1/chat/completions with `stream`: a chat.completion.chunk, an error, `[DONE]`."""
    choice = {
        "type": "object",
        "required": ["index", "delta"],
        "properties": {
            "index": {"const": 0},
            "delta": {
                "type": "object",
                "properties": {"role": {"const": "assistant"}, "content": {"type": ["string", "null"]}},
            },
            "finish_reason": {"enum": ["stop", None]},
        },
    }
    chunk = {
        "type": "object",
        "required": ["id", "object", "created", "model", "choices"],
        "properties": {
            "id": {"type": "string"},
            "object": {"const": "chat.completion.chunk"},
            "created": {"type": "integer"},
            "model": {"type": "string"},
            "choices": {"type": "array", "minItems": 1, "maxItems": 1, "items": choice},
            "citations": {"type": "array", "items": _ref("Citation")},
            "answer": _ref("Answer"),
        },
    }
    return {
        "type": "object",
        "required": ["data"],
        "properties": {
            "event": {"const": "message"},
            "data": {"anyOf": [{"const": "[DONE]"}, _json_data({"anyOf": [chunk, _stream_error("code")]})]},
        },
    }


def _top_k(limits: Limits) -> dict[str, Any]:
    return {"anyOf": [{"type": "integer", "minimum": 1, "maximum": limits.top_k}, {"type": "null"}]}


def _question(limits: Limits) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": limits.question_chars, "pattern": NON_BLANK}


def _text_parts(max_chars: int, non_blank: bool) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "array",
        "items": {"allOf": [_ref("TextPart"), {"properties": {"text": {"maxLength": max_chars}}}]},
    }
    if non_blank:
        schema["minItems"] = 1
        schema["contains"] = {
            "type": "object",
            "required": ["text"],
            "properties": {"text": {"pattern": NON_BLANK}},
        }
    return schema


def exact(doc: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """`doc` (FastAPI's document) with the server's limits and statuses written in."""
    schemas = doc.get("components", {}).get("schemas", {})
    for path_item in doc.get("paths", {}).values():
        for operation in path_item.values():
            operation.get("responses", {}).pop("422", None)
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)

    if "/api/map" in doc.get("paths", {}):  # its JSON body is a FieldMap (the route also returns SVG/HTML)
        from rag.fieldmap import FieldMap

        field_map = FieldMap.model_json_schema(ref_template=REF, mode="serialization")
        for name, sub in field_map.pop("$defs", {}).items():
            schemas.setdefault(name, sub)
        schemas.setdefault("FieldMap", field_map)
        doc.setdefault("components", {})["schemas"] = schemas

    stream = doc.get("paths", {}).get("/api/ask/stream", {}).get("post")
    if stream is not None:
        stream["responses"]["200"] = {
            "description": "Server-sent events `queued`... (the request's place in line, while it "
            "waits for a generation slot), `condensed`, `sources`, `token`..., then `answer` (an "
            'Answer) or `error` (`{"error": {"type", "message", "status"}}`).',
            "content": {"text/event-stream": {"schema": native_events()}},
        }
    completions = doc.get("paths", {}).get("/v1/chat/completions", {}).get("post")
    if completions is not None:
        completions["responses"]["200"]["content"]["text/event-stream"] = {"schema": openai_events()}

    ask = schemas.get("AskRequest")
    if ask is not None:
        props = ask["properties"]
        props["question"].update(_question(limits))
        props["history"]["maxItems"] = limits.history_messages
        props["top_k"].update(_top_k(limits))
    link = schemas.get("PermalinkRequest")
    if link is not None:
        link["properties"]["question"].update(_question(limits))
        link["properties"]["top_k"].update(_top_k(limits))
    turn = schemas.get("HistoryTurn")
    if turn is not None:
        turn["properties"]["content"]["maxLength"] = limits.history_chars

    chat = schemas.get("ChatCompletionRequest")
    if chat is not None:
        chat["properties"]["top_k"].update(_top_k(limits))
        chat["properties"]["messages"]["contains"] = _ref("UserMessage")
    user = schemas.get("UserMessage")
    if user is not None:
        user["properties"]["content"] = {
            "anyOf": [_question(limits), _text_parts(limits.question_chars, non_blank=True)],
            "description": "The question: a string, or text parts whose joined text has at least one "
            "non-space character and at most RAG_SERVER__MAX_QUESTION_CHARS characters.",
        }
    assistant = schemas.get("AssistantMessage")
    if assistant is not None:
        assistant["properties"]["content"] = {
            "anyOf": [
                {"type": "string", "maxLength": limits.history_chars},
                _text_parts(limits.history_chars, non_blank=False),
                {"type": "null"},
            ],
        }
    return doc
