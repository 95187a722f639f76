"""The FastAPI app of `rag serve`: /api/*, /v1/*, /healthz, /docs, and the chat UI at /."""

import contextlib
import logging
import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from rag import __version__
from rag.errors import RagError, StoreError
from rag.queue import GenerationQueue
from rag.serve.api import Api
from rag.serve.contract import install_openapi
from rag.serve.errors import add_error_handlers, error_responses
from rag.serve.memory import HeapTrimmer
from rag.serve.middleware import BodyLimit, MethodGuard, UiGuard, api_key_dependency
from rag.serve.native import add_native_routes
from rag.serve.openai_compat import add_openai_routes
from rag.settings import ServerSettings

if TYPE_CHECKING:
    from rag.pipeline import RAG

logger = logging.getLogger(__name__)

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"]  # HEAD comes with GET


class Health(BaseModel):
    """GET /healthz."""

    model_config = ConfigDict(extra="allow")

    status: Literal["ok"]
    papers: int
    chunks: int
    llm: Any
    retriever: str
    queue: dict[str, Any]
    answer_cache: dict[str, int]


def create_app(rag: "RAG", cfg: ServerSettings | None = None, queue: GenerationQueue | None = None) -> Any:
    """The FastAPI app for a `RAG`; `cfg` defaults to its settings' `server` group.

    Refuses (ConfigError) settings that would answer without a credential where one is expected
    (`ServerSettings.startup_problems`)."""
    from fastapi import Depends, FastAPI
    from starlette.exceptions import HTTPException as StarletteHTTPException

    cfg = cfg or rag.settings.server
    cfg.check_startup()
    queue = queue or GenerationQueue(
        slots=cfg.slots or rag.settings.llm.max_concurrent,
        max_waiting=cfg.max_waiting,
        timeout=cfg.queue_timeout,
        # with `rag serve`'s allocator settings: freed heap back to the OS when no answer runs
        on_idle=HeapTrimmer() if cfg.malloc_arenas else None,
    )
    api = Api(rag, cfg, queue)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        # Every request the line accepts waits in a worker thread (API routes and UI turns run
        # synchronously): anyio's default of 40 threads would hold the rest outside the line.
        import anyio.to_thread

        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens = max(limiter.total_tokens, 2 * (queue.slots + queue.max_waiting) + 16)
        yield

    meta: dict[str, Any] = dict(
        lifespan=lifespan,
        title="ICLR 2025 paper chat API",
        version=__version__,
        description="Cited answers about ICLR 2025 papers. Errors are JSON: "
        '`{"error": {"type": ..., "message": ...}}`.'
        + (" Every route but /healthz needs `Authorization: Bearer <RAG_SERVER__API_KEY>`." if cfg.api_key else ""),
        redoc_url=None,
    )
    try:
        from fastapi_offline import FastAPIOffline

        app = FastAPIOffline(docs_url="/docs", static_url="/docs-static", **meta)
    except ImportError:  # docs then load Swagger UI from a CDN
        app = FastAPI(docs_url="/docs", **meta)
    app.state.api = api

    # Outermost last: the body limit (every path, the UI's too), then 405s, then the UI's allowlist.
    if cfg.ui:
        app.add_middleware(UiGuard, mount="/")
    app.add_middleware(MethodGuard, routes=lambda: app.router.routes)
    app.add_middleware(BodyLimit, limit=cfg.max_body_bytes, prefixes=("/",))
    add_error_handlers(app)
    install_openapi(app, api.limits)

    auth = [Depends(api_key_dependency(cfg))] if cfg.api_key is not None else []
    errors = error_responses(400, 413, 429, 503, auth=bool(auth))

    @app.get("/healthz", tags=["health"], response_model=Health, responses=error_responses(503))
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
            "queue": queue.stats(),
            "answer_cache": rag.answers.stats(),
        }

    add_native_routes(app, api, dependencies=auth, responses=errors)
    add_openai_routes(app, api, dependencies=auth, responses=errors)

    @app.api_route("/api/{rest:path}", methods=ALL_METHODS, include_in_schema=False)
    @app.api_route("/v1/{rest:path}", methods=ALL_METHODS, include_in_schema=False)
    def unknown(rest: str) -> Any:
        raise StarletteHTTPException(404, "no such endpoint; see /docs")

    for route in app.router.routes:
        if getattr(route, "endpoint", None) is unknown:
            route.catch_all = True  # type: ignore[attr-defined]  # MethodGuard: a path here is unknown, not another method's

    if cfg.ui:
        from ui.app import mount_ui

        app = mount_ui(
            app, rag, queue, path="/", auth=cfg.ui_login(), limits=api.limits, queue_size=cfg.ui_queue_size,
            max_file_size=cfg.max_body_bytes,
        )
    return app
