"""Running the app: `rag serve`, and a background server for tests and notebooks."""

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rag.errors import RagError
from rag.settings import ServerSettings, Settings

from .app import create_app

logger = logging.getLogger(__name__)


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
    warmed = rag.engine.warm()  # a small store's sentence vectors: its first answers embed nothing
    if warmed:
        logger.info("embedded %d abstract sentences ahead of the first question", warmed)
    logger.info("store: %d papers, %d chunks at %s", stats["papers"], stats["chunks"], stats["store"])
    if not rag.settings.llm.is_remote:
        try:
            rag.llm.complete("Hello", max_tokens=1)
        except RagError as exc:
            logger.warning("local model not ready: %s", exc)


def serve(settings: Settings, cfg: ServerSettings | None = None) -> None:
    """Check the server settings, build the RAG, warm it up and serve until interrupted.

    ConfigError (before anything loads) for settings `ServerSettings.startup_problems` names."""
    import uvicorn

    from rag.pipeline import RAG

    cfg = cfg or settings.server
    cfg.check_startup()
    if cfg.allow_unauthenticated and (
        (not cfg.loopback and cfg.api_key is None) or (cfg.ui and cfg.api_key is not None and cfg.ui_auth is None)
    ):
        logger.warning(
            "RAG_SERVER__ALLOW_UNAUTHENTICATED: routes that answer need no credential on %s", cfg.host
        )
    rag = RAG(settings)
    warm_up(rag)
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
    cfg = ServerSettings.model_validate({**settings.server.model_dump(), **overrides})
    serve(settings, cfg)
    return 0
