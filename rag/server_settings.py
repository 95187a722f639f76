"""Settings of `rag serve` and its HTTP plumbing: JSON errors, the body-size limit and the API key."""

import hmac
import logging
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .errors import (
    BusyError,
    ConfigError,
    CorpusError,
    EmptyStoreError,
    InvalidRequestError,
    LLMUnavailableError,
    RagError,
    StoreError,
)

logger = logging.getLogger(__name__)


class ServerSettings(BaseSettings):
    """Settings of `rag serve`, from RAG_SERVER__* environment variables (e.g. RAG_SERVER__PORT)."""

    model_config = SettingsConfigDict(env_prefix="RAG_SERVER__", extra="forbid")

    host: str = Field(
        default="127.0.0.1", description="Interface to bind; keep 127.0.0.1 unless behind a proxy."
    )
    port: int = Field(default=7860, ge=0, le=65535, description="TCP port (0: any free port).")
    api_key: SecretStr | None = Field(
        default=None, description="When set, /api/* and /v1/* require `Authorization: Bearer <key>`."
    )
    ui_auth: SecretStr | None = Field(
        default=None, description="`user:password` for a Gradio login page on the UI."
    )
    ui: bool = Field(default=True, description="Serve the chat UI at /.")
    max_question_chars: int = Field(default=2000, ge=1, le=2000, description="Longest question accepted.")
    max_history_messages: int = Field(
        default=20, ge=0, le=200, description="Most earlier messages in a chat request."
    )
    max_history_chars: int = Field(
        default=20000, ge=0, description="Most characters in all earlier messages together."
    )
    max_top_k: int = Field(
        default=20, ge=1, le=50, description="Largest number of sources a request may ask for."
    )
    max_body_bytes: int = Field(default=262144, ge=1024, description="Largest request body in bytes.")
    slots: int | None = Field(
        default=None, ge=1, le=64, description="Generations at once (default: RAG_LLM__MAX_CONCURRENT)."
    )
    max_waiting: int = Field(default=16, ge=0, description="Requests that may wait for a slot; more get 429.")
    queue_timeout: float = Field(
        default=120.0, gt=0, description="Seconds a request waits for a slot before 503."
    )
    ui_queue_size: int = Field(default=32, ge=1, description="Size of the Gradio event queue of the UI.")
    model_name: str = Field(default="iclr-rag", description="Model id reported by /v1/models.")

    @field_validator("ui_auth")
    @classmethod
    def _user_pass(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None and ":" not in v.get_secret_value():
            raise ValueError("ui_auth must look like user:password")
        return v


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


STATUS: list[tuple[type[BaseException], int, str]] = [
    (InvalidRequestError, 400, "invalid_request_error"),
    (EmptyStoreError, 503, "empty_store"),
    (LLMUnavailableError, 503, "llm_unavailable"),
    (StoreError, 503, "store_unavailable"),
    (ConfigError, 503, "config_error"),
    (CorpusError, 400, "corpus_error"),
    (RagError, 500, "rag_error"),
]


def error_status(exc: BaseException) -> tuple[int, str]:
    """HTTP status and error type for a library error."""
    if isinstance(exc, BusyError):
        return (429, "queue_full") if exc.queue_full else (503, "queue_timeout")
    for cls, status, kind in STATUS:
        if isinstance(exc, cls):
            return status, kind
    return 500, "internal_error"


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
        status, kind = error_status(exc)
        if status >= 500:
            logger.warning("%s %s -> %d: %s", request.method, request.url.path, status, exc)
        return error_json(status, kind, str(exc))

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
        return error_json(500, "internal_error", "internal server error (see the server log)")


# -- request limits and auth --------------------------------------------------------------------
class BodyLimit:
    """ASGI middleware: 413 for API request bodies over `limit` bytes (declared or streamed)."""

    def __init__(self, app: Any, limit: int, prefixes: tuple[str, ...]):
        self.app = app
        self.limit = limit
        self.prefixes = prefixes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(self.prefixes):
            await self.app(scope, receive, send)
            return
        too_large = error_json(413, "request_too_large", f"the request body is over {self.limit} bytes")
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"")
        if declared.isdigit():
            if int(declared) > self.limit:
                await too_large(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        if scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        # A streamed (chunked) body: read it here, bounded, then hand it on in one piece.
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                await too_large(scope, receive, send)
                return
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def api_key_dependency(cfg: ServerSettings) -> Callable[..., None]:
    """A FastAPI dependency that checks `Authorization: Bearer <key>` when `cfg.api_key` is set."""
    from fastapi import Depends
    from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
    from starlette.exceptions import HTTPException as StarletteHTTPException

    bearer = HTTPBearer(auto_error=False, description="RAG_SERVER__API_KEY, when the server sets one.")

    def require_key(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)] = None) -> None:
        if cfg.api_key is None:
            return
        given = creds.credentials if creds is not None else ""
        if not hmac.compare_digest(given.encode(), cfg.api_key.get_secret_value().encode()):
            raise StarletteHTTPException(401, "missing or wrong API key (Authorization: Bearer <key>)")

    return require_key
