"""`rag serve`: one FastAPI app with the HTTP API (native and OpenAI-compatible) and the Gradio chat UI."""

import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .api_core import Api, AskRequest, chain_events, close_events, sse, stream_headers
from .chat import GenerationGate
from .errors import RagError, StoreError
from .openai_api import add_openai_routes
from .server_settings import (
    BodyLimit,
    ServerSettings,
    add_error_handlers,
    api_key_dependency,
    error_responses,
    error_status,
)
from .settings import Settings
from .types import Answer

__all__ = ["BackgroundServer", "ServerSettings", "add_serve_command", "create_app", "running", "serve"]

logger = logging.getLogger(__name__)

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


def create_app(rag: Any, cfg: ServerSettings | None = None, gate: GenerationGate | None = None) -> Any:
    """The FastAPI app: /api/*, /v1/*, /healthz, /docs, and the chat UI at / (unless disabled)."""
    from fastapi import Depends, FastAPI
    from fastapi.responses import StreamingResponse
    from starlette.exceptions import HTTPException as StarletteHTTPException

    cfg = cfg or ServerSettings()
    gate = gate or GenerationGate(
        slots=cfg.slots or rag.settings.llm.max_concurrent,
        max_waiting=cfg.max_waiting,
        timeout=cfg.queue_timeout,
    )
    api = Api(rag, cfg, gate)
    meta: dict[str, Any] = dict(
        title="ICLR 2025 paper chat API",
        version="0.1.0",
        description="Cited answers about ICLR 2025 papers. Errors are JSON: "
        '`{"error": {"type": ..., "message": ...}}`.',
        redoc_url=None,
    )
    try:
        from fastapi_offline import FastAPIOffline

        app = FastAPIOffline(docs_url="/docs", static_url="/docs-static", **meta)
    except ImportError:  # docs then load Swagger UI from a CDN
        app = FastAPI(docs_url="/docs", **meta)
    app.state.api = api

    app.add_middleware(BodyLimit, limit=cfg.max_body_bytes, prefixes=("/api/", "/v1/"))
    add_error_handlers(app)

    errors = error_responses()
    auth = [Depends(api_key_dependency(cfg))]

    @app.get("/healthz", tags=["health"])
    def healthz() -> dict[str, Any]:
        """Papers in the store, the LLM in use and the generation queue."""
        try:
            stats = rag.stats()
        except RagError as exc:
            raise StoreError(str(exc)) from exc
        return {
            "status": "ok",
            "papers": stats["papers"],
            "chunks": stats["chunks"],
            "llm": rag.settings.llm.display_name,
            "retriever": rag.settings.retrieval.mode,
            "queue": gate.stats(),
        }

    @app.post("/api/ask", response_model=Answer, tags=["api"], dependencies=auth, responses=errors)
    def ask(req: AskRequest) -> Answer:
        """Answer a question (with optional chat history) with validated citations."""
        return api.answer(req)

    @app.post("/api/ask/stream", tags=["api"], dependencies=auth, responses=errors)
    def ask_stream(req: AskRequest) -> Any:
        """Server-sent events: `condensed`, `sources`, `token`..., then `answer` (or `error`)."""
        head, events = api.primed(req)
        return StreamingResponse(
            _ask_events(head, events), media_type="text/event-stream", headers=stream_headers()
        )

    add_openai_routes(app, api, dependencies=auth, responses=errors)

    @app.api_route("/api/{rest:path}", methods=["GET", "POST", "PUT", "DELETE"], include_in_schema=False)
    @app.api_route("/v1/{rest:path}", methods=["GET", "POST", "PUT", "DELETE"], include_in_schema=False)
    def unknown(rest: str) -> Any:
        raise StarletteHTTPException(404, "no such endpoint; see /docs")

    if cfg.ui:
        from ui.app import mount_ui

        ui_auth = None
        if cfg.ui_auth is not None:
            user, _, password = cfg.ui_auth.get_secret_value().partition(":")
            ui_auth = (user, password)
        app = mount_ui(
            app, rag, gate, path="/", auth=ui_auth, max_top_k=cfg.max_top_k, queue_size=cfg.ui_queue_size
        )
    return app


def _ask_events(head: list[dict[str, Any]], events: Iterator[dict[str, Any]]) -> Iterator[str]:
    """The native stream: `condensed`, `sources`, `token`..., then `answer` (or `error`) events."""
    try:
        for ev in chain_events(head, events):
            if ev["type"] == "condensed":
                yield sse(
                    {"standalone_question": ev["standalone_question"], "method": ev["method"]},
                    "condensed",
                )
            elif ev["type"] == "sources":
                yield sse({"sources": [s.model_dump(mode="json") for s in ev["sources"]]}, "sources")
            elif ev["type"] == "token":
                yield sse({"text": ev["text"]}, "token")
            elif ev["type"] == "answer":
                yield sse(ev["answer"].model_dump(mode="json"), "answer")
    except RagError as exc:
        status, kind = error_status(exc)
        yield sse({"error": {"type": kind, "message": str(exc), "status": status}}, "error")
    finally:
        close_events(events)


# -- running ----------------------------------------------------------------------------------------
class BackgroundServer:
    """Serve an app with uvicorn in a thread (tests, notebooks); `url` is known once started."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning"):
        import uvicorn

        config = uvicorn.Config(
            app, host=host, port=port, log_level=log_level, access_log=False, timeout_graceful_shutdown=3
        )
        self.server = uvicorn.Server(config)
        self.host = host
        self._thread = threading.Thread(target=self.server.run, name="rag-server", daemon=True)

    @property
    def url(self) -> str:
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://{self.host}:{port}"

    def start(self, timeout: float = 60.0) -> "BackgroundServer":
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=15)

    def __enter__(self) -> "BackgroundServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


@contextmanager
def running(rag: Any, cfg: ServerSettings | None = None, **app_kwargs: Any) -> Iterator[BackgroundServer]:
    """A started server for `rag` on a free 127.0.0.1 port."""
    cfg = cfg or ServerSettings(port=0)
    with BackgroundServer(create_app(rag, cfg, **app_kwargs), host=cfg.host, port=cfg.port) as srv:
        yield srv


def warm_up(rag: Any) -> None:
    """Open the store, load the embedder and (local only) the LLM, so the first question is fast."""
    stats = rag.stats()
    rag.retriever  # noqa: B018 - loads the embedding model and opens the index
    logger.info("store: %d papers, %d chunks at %s", stats["papers"], stats["chunks"], stats["store"])
    if not rag.settings.llm.is_remote:
        try:
            rag.llm.complete("Hello", max_tokens=1)
        except RagError as exc:
            logger.warning("local model not ready: %s", exc)


def serve(settings: Settings, cfg: ServerSettings | None = None) -> None:
    """Build the RAG, warm it up and serve until interrupted."""
    import ipaddress

    import uvicorn

    from .pipeline import RAG

    cfg = cfg or ServerSettings()
    rag = RAG(settings)
    warm_up(rag)
    try:
        loopback = ipaddress.ip_address(cfg.host).is_loopback
    except ValueError:
        loopback = cfg.host == "localhost"
    if not loopback and cfg.api_key is None:
        logger.warning(
            "binding %s without RAG_SERVER__API_KEY: anyone on the network can use the API", cfg.host
        )
    app = create_app(rag, cfg)
    base = f"http://{cfg.host}:{cfg.port}"
    logger.info(
        "chat UI at %s/ · API docs at %s/docs · OpenAI base_url %s/v1 · LLM %s",
        base,
        base,
        base,
        settings.llm.display_name,
    )
    uvicorn.run(
        app,
        host=cfg.host,
        port=cfg.port,
        log_level=settings.log_level.lower(),
        access_log=False,
        timeout_graceful_shutdown=5,
    )


def add_serve_command(sub: Any) -> None:
    """Register `rag serve` on the CLI's subparsers."""
    p = sub.add_parser(
        "serve",
        help="chat UI and HTTP API on one server",
        description="Serve the Gradio chat UI at / and the HTTP API (/api/ask, /v1/chat/completions, "
        "/healthz, /docs). Other settings: RAG_SERVER__* environment variables (see docs/serving.md).",
    )
    p.add_argument("--host", default=None, help="interface to bind (default: RAG_SERVER__HOST or 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default: RAG_SERVER__PORT or 7860)")
    p.add_argument("--no-ui", action="store_true", help="serve only the HTTP API")
    p.set_defaults(handler=_serve_command)


def _serve_command(args: Any, settings: Settings) -> int:
    overrides: dict[str, Any] = {}
    if args.host:
        overrides["host"] = args.host
    if args.port is not None:
        overrides["port"] = args.port
    if args.no_ui:
        overrides["ui"] = False
    cfg = ServerSettings(**overrides)
    serve(settings, cfg)
    return 0
