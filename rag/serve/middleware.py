"""ASGI/FastAPI plumbing: the request-body limit, the UI's route allowlist, 405s, the API-key check."""

import hmac
from collections.abc import Callable, Iterable
from typing import Annotated, Any

from rag.serve.errors import error_json
from rag.settings import ServerSettings


class BodyLimit:
    """ASGI middleware: 413 for request bodies over `limit` bytes (declared or streamed) under `prefixes`."""

    def __init__(self, app: Any, limit: int, prefixes: tuple[str, ...] = ("/",)):
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


# The Gradio routes the chat screen uses (under /gradio_api/, after Gradio's own login check where it
# has one; /run/ runs the screen's unqueued events, Gradio refuses its queued ones there). Everything
# else Gradio serves there is refused: uploads (/upload, /process_recording, /component_server,
# /stream/...: the screen has no file, audio or streaming input), the API routes for other clients
# (/call, /api), /proxy=, run history, deep links, the dev reloader and the vibe editor.
UI_API_ALLOWED = (
    "queue/join",
    "queue/data",
    "run/",
    "heartbeat/",
    "cancel",
    "reset",
    "info",
    "login_check",
    "token",
    "user",
    "app_id",
    "startup-events",
    "theme.css",
    "file=",
)
UI_REFUSED_ROOTS = ("monitoring",)


class UiGuard:
    """ASGI middleware: 404 for the Gradio routes of the UI mounted at `mount` that the chat screen
    does not use (see UI_API_ALLOWED), whatever the login."""

    def __init__(self, app: Any, mount: str = "/", allowed: Iterable[str] = UI_API_ALLOWED):
        self.app = app
        base = mount.rstrip("/")
        self.api_prefix = f"{base}/gradio_api/"
        self.allowed = tuple(allowed)
        self.refused = tuple(f"{base}/{root}" for root in UI_REFUSED_ROOTS)

    def refuses(self, path: str) -> bool:
        if path.startswith(self.api_prefix):
            rest = path[len(self.api_prefix) :]
            return not any(
                rest == name.rstrip("/") or rest == name + "/" or (name.endswith(("/", "=")) and rest.startswith(name))
                for name in self.allowed
            )
        return any(path == root or path.startswith(root + "/") for root in self.refused)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.refuses(str(scope.get("path", ""))):
            await error_json(404, "not_found", "no such endpoint")(scope, receive, send)
            return
        await self.app(scope, receive, send)


class MethodGuard:
    """ASGI middleware: 405 with `Allow` for a path of the app's own routes asked with another method
    (before a catch-all route or the UI mounted at / would take it)."""

    def __init__(self, app: Any, routes: Callable[[], Iterable[Any]]):
        self.app = app
        self.routes = routes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            allowed = self.allowed_methods(scope)
            if allowed is not None and scope.get("method") not in allowed:
                allow = ", ".join(sorted(allowed))
                response = error_json(
                    405, "method_not_allowed", f"{scope.get('method')} is not allowed here; allowed: {allow}",
                    headers={"Allow": allow},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def allowed_methods(self, scope: Any) -> set[str] | None:
        """The methods of the routes whose path matches, or None when no route has this path."""
        from starlette.routing import Match

        methods: set[str] = set()
        found = False
        for route in self.routes():
            if getattr(route, "catch_all", False) or not hasattr(route, "methods"):
                continue
            match, _ = route.matches(scope)
            if match == Match.FULL:
                return None
            if match == Match.PARTIAL:
                found = True
                methods |= set(route.methods or ())
        return methods if found else None


def api_key_dependency(cfg: ServerSettings) -> Callable[..., None]:
    """A FastAPI dependency that checks `Authorization: Bearer <key>` against `cfg.api_key` (set)."""
    from fastapi import Depends
    from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
    from starlette.exceptions import HTTPException as StarletteHTTPException

    if cfg.api_key is None:
        raise ValueError("api_key_dependency needs cfg.api_key")
    key = cfg.api_key.get_secret_value().encode()
    bearer = HTTPBearer(auto_error=False, description="The server's RAG_SERVER__API_KEY.")

    def require_key(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)] = None) -> None:
        given = creds.credentials if creds is not None else ""
        if not hmac.compare_digest(given.encode("utf-8", "surrogateescape"), key):
            raise StarletteHTTPException(401, "missing or wrong API key (Authorization: Bearer <key>)")

    return require_key
