"""ASGI/FastAPI plumbing: the request-body limit and the API-key check."""

import hmac
from collections.abc import Callable
from typing import Annotated, Any

from rag.settings import ServerSettings

from .errors import error_json


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
