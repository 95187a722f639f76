"""The FastAPI app of `rag serve`: /api/*, /v1/*, /healthz, /docs, and the chat UI at /."""

import logging
import os
from typing import Any

from rag import __version__
from rag.errors import RagError, StoreError
from rag.gate import GenerationGate
from rag.settings import ServerSettings

from .api import Api
from .errors import add_error_handlers, error_responses
from .middleware import BodyLimit, api_key_dependency
from .native import add_native_routes
from .openai_compat import add_openai_routes

logger = logging.getLogger(__name__)

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


def create_app(rag: Any, cfg: ServerSettings | None = None, gate: GenerationGate | None = None) -> Any:
    """The FastAPI app for a `RAG`; `cfg` defaults to its settings' `server` group."""
    from fastapi import Depends, FastAPI
    from starlette.exceptions import HTTPException as StarletteHTTPException

    cfg = cfg or rag.settings.server
    gate = gate or GenerationGate(
        slots=cfg.slots or rag.settings.llm.max_concurrent,
        max_waiting=cfg.max_waiting,
        timeout=cfg.queue_timeout,
    )
    api = Api(rag, cfg, gate)
    meta: dict[str, Any] = dict(
        title="ICLR 2025 paper chat API",
        version=__version__,
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

    add_native_routes(app, api, dependencies=auth, responses=errors)
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
        app = mount_ui(app, rag, gate, path="/", auth=ui_auth, limits=api.limits, queue_size=cfg.ui_queue_size)
    return app
