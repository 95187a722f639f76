"""Running the app: `rag serve`, and a background server for tests and notebooks."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rag.errors import RagError
from rag.settings import ServerSettings, Settings

if TYPE_CHECKING:
    from rag.pipeline import RAG

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
def running(rag: RAG, cfg: ServerSettings | None = None, **app_kwargs: Any) -> Iterator[BackgroundServer]:
    """A started server for `rag` on a free 127.0.0.1 port."""
    from rag.serve.app import create_app

    cfg = cfg or ServerSettings(port=0)
    with BackgroundServer(create_app(rag, cfg, **app_kwargs), host=cfg.host, port=cfg.port) as srv:
        yield srv


def warm_up(rag: RAG) -> None:
    """Open the store, load the embedder and (local only, when answers use it) the LLM, so the
    first question is fast. Evidence answers with rules condensing (the local model's defaults)
    never call the model: it is not loaded, which keeps ~0.2 GB out of the server's memory."""
    stats = rag.stats()
    rag.retriever  # noqa: B018 - loads the embedding model and opens the index
    warmed = rag.engine.warm()  # a small store's sentence vectors: its first answers embed nothing
    if warmed:
        logger.info("embedded %d abstract sentences ahead of the first question", warmed)
    logger.info("store: %d papers, %d chunks at %s", stats["papers"], stats["chunks"], stats["store"])
    if not rag.settings.llm.is_remote and _answers_use_llm(rag.settings):
        try:
            from rag.answer.engine import answer_messages

            # The answer prompt's fixed start, so the first question already reuses its KV cache.
            rag.llm.chat(answer_messages("warm-up", []), max_tokens=1)
        except RagError as exc:
            logger.warning("local model not ready: %s", exc)


M_ARENA_MAX = -8  # glibc mallopt parameter


def limit_malloc_arenas(arenas: int = 2) -> bool:
    """Cap glibc's malloc arenas. By default every thread that allocates gets its own arena (up to
    8 per core); the server answers in up to ~100 worker threads, and the memory each one frees
    (embedding tensors, parsed documents) stays cached in its arena, so RSS climbs with the number
    of threads that ever answered. Called before the server starts its threads. False when the C
    library is not glibc (nothing changed)."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_ARENA_MAX, arenas))
    except (OSError, AttributeError):
        return False


def _answers_use_llm(settings: Settings) -> bool:
    remote = settings.llm.is_remote
    return (
        settings.answer.resolved_mode(remote) == "generative"
        or settings.answer.condenses_with_llm(remote)
        or settings.retrieval.rerank == "llm"
    )


def serve(settings: Settings, cfg: ServerSettings | None = None) -> None:
    """Check the server settings, build the RAG, warm it up and serve until interrupted.

    ConfigError (before anything loads) for settings `ServerSettings.startup_problems` names."""
    import uvicorn

    from rag.pipeline import RAG
    from rag.serve.app import create_app

    cfg = cfg or settings.server
    cfg.check_startup()
    if cfg.allow_unauthenticated and (
        (not cfg.loopback and cfg.api_key is None) or (cfg.ui and cfg.api_key is not None and cfg.ui_auth is None)
    ):
        logger.warning(
            "RAG_SERVER__ALLOW_UNAUTHENTICATED: routes that answer need no credential on %s", cfg.host
        )
    if cfg.malloc_arenas and limit_malloc_arenas(cfg.malloc_arenas):
        logger.debug("malloc arenas capped at %d", cfg.malloc_arenas)
    # oneDNN (torch's CPU kernels) keeps up to 1,024 compiled kernels, one per input shape; questions
    # and sentences come in ever new lengths and batch sizes, so the server grew by ~0.5 GB over its
    # first 60 answers. Query-time embedding is as fast without the cache (docs/scaling.md). Read
    # when torch builds its first kernel, i.e. before warm-up; a value in the environment wins.
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "0")
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
