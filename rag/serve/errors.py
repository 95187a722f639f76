"""JSON error responses of the server: every error is `{"error": {"type", "message"}}` with the
status of `rag.errors.describe` (the one table shared with the UI and the client)."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel

from rag.errors import RagError, describe

logger = logging.getLogger(__name__)


# -- errors -------------------------------------------------------------------------------------
class ApiError(BaseModel):
    type: str
    message: str


class ErrorBody(BaseModel):
    error: ApiError


def error_responses() -> dict[int | str, dict[str, Any]]:
    """The documented error responses of the answering endpoints."""
    return {
        400: {"model": ErrorBody},
        401: {"model": ErrorBody},
        429: {"model": ErrorBody},
        503: {"model": ErrorBody},
    }


def error_status(exc: BaseException) -> tuple[int, str]:
    """HTTP status and error type for an exception."""
    info = describe(exc)
    return info.status, info.kind


def error_event(exc: BaseException) -> dict[str, Any]:
    """The body of an error inside a stream: `{"error": {"type", "message", "status"}}`."""
    info = describe(exc)
    return {"error": {"type": info.kind, "message": info.message, "status": info.status}}


def error_json(status: int, kind: str, message: str) -> Any:
    """A JSON error response `{"error": {"type": ..., "message": ...}}` with its retry/auth header."""
    from fastapi.responses import JSONResponse

    headers = {"Retry-After": "10"} if status in (429, 503) else None
    if status == 401:
        headers = {"WWW-Authenticate": "Bearer"}
    return JSONResponse({"error": {"type": kind, "message": message}}, status_code=status, headers=headers)


def add_error_handlers(app: Any) -> None:
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
        kinds = {401: "authentication_error", 404: "not_found", 405: "method_not_allowed"}
        return error_json(exc.status_code, kinds.get(exc.status_code, "http_error"), str(exc.detail))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> Any:
        logger.exception("unhandled error on %s %s", request.method, request.url.path)
        info = describe(exc)
        return error_json(info.status, info.kind, info.message)
