"""JSON error responses of the server: every error is `{"error": {"type", "message"}}` with the
status of `rag.errors.describe` (the one table shared with the UI and the client)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, create_model

from rag.errors import ERROR_TABLE, RagError, describe

if TYPE_CHECKING:
    from fastapi import FastAPI

logger = logging.getLogger(__name__)

# Error types the server itself answers with (beside those of rag.errors.ERROR_TABLE).
HTTP_KINDS = {
    400: "invalid_request_error",  # e.g. Starlette's "error parsing the body"
    401: "authentication_error",
    404: "not_found",
    405: "method_not_allowed",
    413: "request_too_large",
}
BUSY_KINDS = {429: "queue_full", 503: "queue_timeout"}
STATUS_TEXT = {
    400: "Invalid input or a limit exceeded.",
    401: "Missing or wrong API key (`Authorization: Bearer <key>`).",
    404: "No such endpoint, model or paper.",
    405: "The method is not allowed here; `Allow` lists those that are.",
    413: "The request body is too large (RAG_SERVER__MAX_BODY_BYTES).",
    429: "The waiting line for a generation slot is full; retry after `Retry-After` seconds.",
    503: "The LLM is unreachable, the store is empty or unreadable, or no generation slot freed up in "
    "time; retry after `Retry-After` seconds.",
}


# -- errors -------------------------------------------------------------------------------------
class ApiError(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str
    message: str


class ErrorBody(BaseModel):
    """`{"error": {"type", "message"}}`: every error response of the server."""

    model_config = ConfigDict(extra="forbid")

    error: ApiError


def error_kinds(status: int) -> list[str]:
    """The error types the server answers with under `status`."""
    kinds = [kind for _cls, code, kind, _user in ERROR_TABLE if code == status]
    kinds += [kind for code, kind in (*HTTP_KINDS.items(), *BUSY_KINDS.items()) if code == status]
    return sorted(set(kinds))


_MODELS: dict[int, type[BaseModel]] = {}


def error_model(status: int) -> type[BaseModel]:
    """`ErrorBody` with `error.type` narrowed to the types `status` carries (an OpenAPI enum)."""
    if status not in _MODELS:
        kinds = tuple(error_kinds(status))
        strict = ConfigDict(extra="forbid")
        kind: Any = Literal[kinds] if kinds else str
        detail = create_model(
            f"ApiError{status}", __config__=strict, type=(kind, ...), message=(str, ...)
        )
        _MODELS[status] = create_model(
            f"Error{status}", __config__=strict, __doc__=ErrorBody.__doc__, error=(detail, ...)
        )
    return _MODELS[status]


def _header(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "schema": schema}


def error_response(status: int) -> dict[str, Any]:
    """The OpenAPI response of one error status (JSON body, and its Retry-After/WWW-Authenticate/Allow)."""
    out: dict[str, Any] = {"model": error_model(status), "description": STATUS_TEXT.get(status, "Error.")}
    if status in (429, 503):
        out["headers"] = {
            "Retry-After": _header("Seconds to wait before retrying.", {"type": "string", "pattern": "^[0-9]+$"})
        }
    elif status == 401:
        out["headers"] = {"WWW-Authenticate": _header("`Bearer`.", {"type": "string"})}
    elif status == 405:
        out["headers"] = {"Allow": _header("The methods this path allows.", {"type": "string"})}
    return out


def error_responses(*statuses: int, auth: bool = False) -> dict[int | str, dict[str, Any]]:
    """Documented error responses: `statuses`, plus 401 when the route needs the API key."""
    codes = sorted(set(statuses) | ({401} if auth else set()))
    return {code: error_response(code) for code in codes}


def error_status(exc: BaseException) -> tuple[int, str]:
    """HTTP status and error type for an exception."""
    info = describe(exc)
    return info.status, info.kind


def error_event(exc: BaseException) -> dict[str, Any]:
    """The body of an error inside a stream: `{"error": {"type", "message", "status"}}`."""
    info = describe(exc)
    return {"error": {"type": info.kind, "message": info.message, "status": info.status}}


def error_json(status: int, kind: str, message: str, headers: Mapping[str, str] | None = None) -> Any:
    """A JSON error response `{"error": {"type": ..., "message": ...}}` with its retry/auth header."""
    from fastapi.responses import JSONResponse

    extra = dict(headers or {})
    if status in (429, 503):
        extra.setdefault("Retry-After", "10")
    if status == 401:
        extra.setdefault("WWW-Authenticate", "Bearer")
    return JSONResponse(
        {"error": {"type": kind, "message": printable(message)}}, status_code=status, headers=extra or None
    )


def printable(text: str, limit: int = 1000) -> str:
    """`text` as UTF-8 can carry it (a lone surrogate from a JSON escape is spelled out), cut to `limit`."""
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def add_error_handlers(app: FastAPI) -> None:
    """Turn library errors, invalid requests, HTTP errors and crashes into JSON error responses."""
    from fastapi import Request
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException as StarletteHTTPException

    @app.exception_handler(RagError)
    async def _rag_error(request: Request, exc: RagError) -> Any:
        info = describe(exc)
        if info.status >= 500:
            logger.warning("%s %s -> %d: %s", request.method, request.url.path, info.status, exc)
        return error_json(info.status, info.kind, info.message)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Any:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        if first.get("type") == "json_invalid":
            return error_json(400, "invalid_request_error", "the request body is not valid JSON")
        where = ".".join(str(x) for x in first.get("loc", ()) if x != "body")
        return error_json(400, "invalid_request_error", f"{where + ': ' if where else ''}{first.get('msg')}")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Any:
        kind = HTTP_KINDS.get(exc.status_code, "http_error")
        return error_json(exc.status_code, kind, str(exc.detail), headers=exc.headers)

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> Any:
        logger.exception("unhandled error on %s %s", request.method, request.url.path)
        info = describe(exc)
        return error_json(info.status, info.kind, info.message)
