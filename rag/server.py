"""`rag serve`: one FastAPI app with the HTTP API (native and OpenAI-compatible) and the Gradio chat UI."""

import hmac
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .chat import BusyError, ChatTurn, GenerationGate, LiveMarkerFilter, chat_stream
from .errors import (
    ConfigError,
    CorpusError,
    EmptyStoreError,
    InvalidRequestError,
    LLMUnavailableError,
    RagError,
    StoreError,
)
from .settings import Decision, RetrieverMode, Settings
from .types import Answer

logger = logging.getLogger(__name__)

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


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


# -- request and response bodies ----------------------------------------------------------------
class AskRequest(BaseModel):
    """A question, optionally with the conversation so far."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="The (follow-up) question.")
    history: list[ChatTurn] = Field(default_factory=list, description="Earlier messages, oldest first.")
    top_k: int | None = Field(
        default=None, description="Papers given to the LLM (default: RAG_RETRIEVAL__TOP_K)."
    )
    decisions: list[Decision] | None = Field(default=None, description="Only papers with these decisions.")
    retriever: RetrieverMode | None = Field(default=None, description="dense, bm25 or hybrid.")


class OpenAIMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(p.get("text", "") for p in self.content if p.get("type") == "text")
        return self.content or ""


class ChatCompletionRequest(BaseModel):
    """OpenAI chat-completions request; `top_k`, `decisions`, `retriever` may come as extra body fields."""

    model_config = ConfigDict(extra="allow")

    model: str | None = None
    messages: list[OpenAIMessage] = Field(min_length=1)
    stream: bool = False
    top_k: int | None = None
    decisions: list[Decision] | None = None
    retriever: RetrieverMode | None = None


class ApiError(BaseModel):
    type: str
    message: str


class ErrorBody(BaseModel):
    error: ApiError


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
    from fastapi.responses import JSONResponse

    headers = {"Retry-After": "10"} if status in (429, 503) else None
    if status == 401:
        headers = {"WWW-Authenticate": "Bearer"}
    return JSONResponse({"error": {"type": kind, "message": message}}, status_code=status, headers=headers)


def sse(data: Any, event: str | None = None) -> str:
    """One server-sent event."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"


# -- the app --------------------------------------------------------------------------------------
class Api:
    """Request checks and answering shared by the native and the OpenAI-compatible endpoints."""

    def __init__(self, rag: Any, cfg: ServerSettings, gate: GenerationGate):
        self.rag = rag
        self.cfg = cfg
        self.gate = gate
        self.started = int(time.time())

    def check(self, question: str, history: Sequence[ChatTurn], top_k: int | None) -> str:
        """Apply the input limits; raises InvalidRequestError naming the limit."""
        q = (question or "").strip()
        if not q:
            raise InvalidRequestError("the question is empty")
        if len(q) > self.cfg.max_question_chars:
            raise InvalidRequestError(
                f"the question has {len(q)} characters; the limit is {self.cfg.max_question_chars}"
            )
        if len(history) > self.cfg.max_history_messages:
            raise InvalidRequestError(
                f"the history has {len(history)} messages; the limit is {self.cfg.max_history_messages}"
            )
        chars = sum(len(t.content) for t in history)
        if chars > self.cfg.max_history_chars:
            raise InvalidRequestError(
                f"the history has {chars} characters; the limit is {self.cfg.max_history_chars}"
            )
        if top_k is not None and not 1 <= top_k <= self.cfg.max_top_k:
            raise InvalidRequestError(f"top_k must be between 1 and {self.cfg.max_top_k}")
        return q

    def events(self, req: AskRequest) -> Iterator[dict[str, Any]]:
        """Checked chat events; the generator is advanced to its sources before a stream starts."""
        q = self.check(req.question, req.history, req.top_k)
        self.gate.check()
        return chat_stream(
            self.rag,
            q,
            req.history,
            top_k=req.top_k,
            decisions=req.decisions,
            retriever=req.retriever,
            gate=self.gate,
        )

    def primed(self, req: AskRequest) -> tuple[list[dict[str, Any]], Iterator[dict[str, Any]]]:
        """Run the request up to the retrieved sources, so waiting, store and input errors keep their status."""
        events = self.events(req)
        head: list[dict[str, Any]] = []
        for ev in events:
            head.append(ev)
            if ev["type"] in ("sources", "answer"):
                break
        return head, events

    def answer(self, req: AskRequest) -> Answer:
        for ev in self.events(req):
            if ev["type"] == "answer":
                return ev["answer"]
        raise LLMUnavailableError("the answer stream ended without an answer")


def _openai_to_ask(body: ChatCompletionRequest) -> AskRequest:
    turns = [m for m in body.messages if m.role in ("user", "assistant")]
    if not turns or turns[-1].role != "user":
        raise InvalidRequestError("the last message must come from the user")
    history = [ChatTurn(role=m.role, content=m.text()) for m in turns[:-1]]  # type: ignore[arg-type]
    return AskRequest(
        question=turns[-1].text(),
        history=history,
        top_k=body.top_k,
        decisions=body.decisions,
        retriever=body.retriever,
    )


def completion_text(answer: Answer) -> str:
    """The answer followed by its reference list, as an OpenAI client shows it."""
    return answer.to_markdown()


def _chunk(
    cid: str, created: int, model: str, delta: dict[str, Any], finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def create_app(rag: Any, cfg: ServerSettings | None = None, gate: GenerationGate | None = None) -> Any:
    """The FastAPI app: /api/*, /v1/*, /healthz, /docs, and the chat UI at / (unless disabled)."""
    from fastapi import Depends, FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import StreamingResponse
    from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
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

    bearer = HTTPBearer(auto_error=False, description="RAG_SERVER__API_KEY, when the server sets one.")

    def require_key(creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)] = None) -> None:
        if cfg.api_key is None:
            return
        given = creds.credentials if creds is not None else ""
        if not hmac.compare_digest(given.encode(), cfg.api_key.get_secret_value().encode()):
            raise StarletteHTTPException(401, "missing or wrong API key (Authorization: Bearer <key>)")

    app.add_middleware(BodyLimit, limit=cfg.max_body_bytes, prefixes=("/api/", "/v1/"))

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

    errors: dict[int | str, dict[str, Any]] = {
        400: {"model": ErrorBody},
        401: {"model": ErrorBody},
        429: {"model": ErrorBody},
        503: {"model": ErrorBody},
    }
    auth = [Depends(require_key)]

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

        def body() -> Iterator[str]:
            try:
                for ev in _chain(head, events):
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
                _close(events)

        return StreamingResponse(
            body(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    @app.get("/v1/models", tags=["openai"], dependencies=auth)
    def models() -> dict[str, Any]:
        """The one model this server offers (OpenAI format)."""
        return {"object": "list", "data": [_model_card(cfg.model_name, api.started)]}

    @app.get("/v1/models/{model_id}", tags=["openai"], dependencies=auth)
    def model(model_id: str) -> dict[str, Any]:
        if model_id != cfg.model_name:
            raise StarletteHTTPException(404, f"no model {model_id!r}; this server offers {cfg.model_name!r}")
        return _model_card(cfg.model_name, api.started)

    @app.post("/v1/chat/completions", tags=["openai"], dependencies=auth, responses=errors)
    def chat_completions(body: ChatCompletionRequest) -> Any:
        """OpenAI-compatible chat; the answer ends with its reference list, and the response carries
        `citations` (list of Citation) and `answer` (the full Answer) as extra fields."""
        req = _openai_to_ask(body)
        cid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        created = int(time.time())
        name = cfg.model_name
        if not body.stream:
            answer = api.answer(req)
            return {
                "id": cid,
                "object": "chat.completion",
                "created": created,
                "model": name,
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": completion_text(answer)},
                    }
                ],
                "usage": {
                    "prompt_tokens": 0,
                    "completion_tokens": answer.completion_tokens or 0,
                    "total_tokens": answer.completion_tokens or 0,
                },
                "citations": [c.model_dump(mode="json") for c in answer.citations],
                "answer": answer.model_dump(mode="json"),
            }
        head, events = api.primed(req)

        def body_() -> Iterator[str]:
            flt = LiveMarkerFilter([])
            try:
                yield sse(_chunk(cid, created, name, {"role": "assistant", "content": ""}))
                for ev in _chain(head, events):
                    if ev["type"] == "sources":
                        flt = LiveMarkerFilter([s.number for s in ev["sources"]])
                    elif ev["type"] == "token":
                        text = flt.feed(ev["text"])
                        if text:
                            yield sse(_chunk(cid, created, name, {"content": text}))
                    elif ev["type"] == "answer":
                        answer: Answer = ev["answer"]
                        tail = flt.flush()
                        refs = answer.references_markdown()
                        tail += f"\n\n**References**\n\n{refs}" if refs else ""
                        if tail:
                            yield sse(_chunk(cid, created, name, {"content": tail}))
                        yield sse(
                            _chunk(
                                cid,
                                created,
                                name,
                                {},
                                "stop",
                                citations=[c.model_dump(mode="json") for c in answer.citations],
                                answer=answer.model_dump(mode="json"),
                            )
                        )
                yield sse("[DONE]")
            except RagError as exc:
                status, kind = error_status(exc)
                yield sse({"error": {"type": kind, "message": str(exc), "code": status}})
            finally:
                _close(events)

        return StreamingResponse(
            body_(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

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


def _model_card(name: str, created: int) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": created, "owned_by": "iclr-rag"}


def _chain(head: list[dict[str, Any]], rest: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    yield from head
    if not head or head[-1]["type"] != "answer":
        yield from rest


def _close(events: Iterator[Any]) -> None:
    close = getattr(events, "close", None)
    if close is not None:
        close()


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
