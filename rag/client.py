"""Python client of a `rag serve` server: the same typed Answer/Citation objects as the library."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from typing import Any, Unpack

import httpx

from rag import __version__
from rag.errors import InvalidRequestError, RagError
from rag.events import Condensed, Event, Final, Queued, Sources, Token
from rag.settings import SearchOptions, search_options
from rag.types import Answer

logger = logging.getLogger(__name__)

DEFAULT_URL = "http://127.0.0.1:7860"


class APIError(RagError):
    """The server answered with an error (or could not be reached)."""

    def __init__(self, message: str, status_code: int | None = None, error_type: str = ""):
        super().__init__(message)
        self.status_code = status_code
        self.error_type = error_type


class APIConnectionError(APIError):
    """No answer from the server: it is down, unreachable or too slow."""


class AuthenticationError(APIError):
    """The server wants an API key (RAG_SERVER__API_KEY) and got none or a wrong one."""


class BadRequestError(APIError, InvalidRequestError):
    """The server rejected the request (limits, malformed input, unknown endpoint)."""


class ServerBusyError(APIError):
    """Every generation slot is busy and the waiting line is full or timed out; retry later."""


class ServiceUnavailableError(APIError):
    """The server cannot answer now: its LLM is unreachable or its store is empty or broken."""


def _raise_for(status: int, body: Any, url: str) -> None:
    err = body.get("error", {}) if isinstance(body, dict) else {}
    kind = str(err.get("type", "")) if isinstance(err, dict) else ""
    message = str(err.get("message", "")) if isinstance(err, dict) else ""
    message = message or (str(body)[:200] if body else f"HTTP {status}")
    text = f"{url}: HTTP {status}: {message}"
    if status == 401:
        raise AuthenticationError(text, status, kind)
    if status == 429 or kind in ("queue_full", "queue_timeout"):
        raise ServerBusyError(text, status, kind)
    if status == 503:
        raise ServiceUnavailableError(text, status, kind)
    if 400 <= status < 500:
        raise BadRequestError(text, status, kind)
    raise APIError(text, status, kind)


class Client:
    """`Client("http://127.0.0.1:7860").ask("...")` returns a `rag.Answer`."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        api_key: str | None = None,
        timeout: float = 300.0,
        transport: httpx.BaseTransport | None = None,
    ):
        self.base_url = base_url.rstrip("/")
        headers = {"User-Agent": f"iclr-rag-client/{__version__}"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=10.0),
            transport=transport,
        )
        self.history: list[dict[str, Any]] = []

    # -- plumbing ---------------------------------------------------------------------------------
    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            resp = self._http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from exc
        body = _json(resp)
        if resp.status_code >= 400:
            _raise_for(resp.status_code, body, self.base_url + path)
        return body

    def _unreachable(self, exc: Exception) -> APIConnectionError:
        return APIConnectionError(
            f"cannot reach the RAG server at {self.base_url} ({type(exc).__name__}: {exc}); "
            "is `rag serve` running?"
        )

    @staticmethod
    def _payload(question: str, history: Sequence[Any] | None, options: SearchOptions) -> dict[str, Any]:
        body: dict[str, Any] = {"question": question, "history": [_turn(t) for t in history or []]}
        body.update({k: v for k, v in options.items() if v is not None})
        if options.get("decisions"):
            body["decisions"] = list(options["decisions"] or ())
        return body

    # -- public API -------------------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        """The server's /healthz: papers, chunks, LLM in use, queue."""
        health: dict[str, Any] = self._request("GET", "/healthz")
        return health

    def ask(self, question: str, history: Sequence[Any] | None = None, **options: Unpack[SearchOptions]) -> Answer:
        """Answer one question (optionally in a conversation) with citations; options as `RAG.ask`'s."""
        body = self._payload(question, history, search_options(options))
        return Answer.model_validate(self._request("POST", "/api/ask", json=body))

    def stream(
        self, question: str, history: Sequence[Any] | None = None, **options: Unpack[SearchOptions]
    ) -> Iterator[Event]:
        """Typed events like `RAG.chat_stream`: `Queued`... (while the server's line is ahead),
        `Condensed`, `Sources`, `Token`..., then `Final`."""
        body = self._payload(question, history, search_options(options))
        url = self.base_url + "/api/ask/stream"
        try:
            with self._http.stream("POST", "/api/ask/stream", json=body) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    _raise_for(resp.status_code, _json(resp), url)
                for event, data in _sse(resp.iter_lines()):
                    if event == "error":
                        err = data.get("error", {})
                        _raise_for(int(err.get("status", 500)), data, url)
                    elif event == "sources":
                        yield Sources.model_validate(data)
                    elif event == "token":
                        yield Token(text=data["text"])
                    elif event == "answer":
                        yield Final(answer=Answer.model_validate(data))
                    elif event == "condensed":
                        yield Condensed.model_validate(data)
                    elif event == "queued":
                        yield Queued.model_validate(data)
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from exc

    def chat(self, question: str, **options: Unpack[SearchOptions]) -> Answer:
        """Ask within this client's conversation (follow-ups work); `reset()` starts a new one."""
        answer = self.ask(question, self.history, **options)
        self.history.append({"role": "user", "content": question})
        self.history.append(
            {
                "role": "assistant",
                "content": answer.text,
                "citations": [c.model_dump(mode="json") for c in answer.citations],
            }
        )
        return answer

    def reset(self) -> None:
        """Forget the conversation kept by `chat()`."""
        self.history.clear()

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _turn(t: Any) -> dict[str, Any]:
    if isinstance(t, dict):
        return t
    if hasattr(t, "model_dump"):
        dumped: dict[str, Any] = t.model_dump(mode="json")
        return dumped
    raise TypeError(f"history items must be dicts with role and content, not {type(t).__name__}")


def _json(resp: httpx.Response) -> Any:
    try:
        return resp.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return resp.text


def _sse(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    """(event, data) pairs of a server-sent-event stream."""
    event, data = "message", list[str]()
    for line in lines:
        if not line:
            if data:
                yield event, json.loads("\n".join(data))
            event, data = "message", list[str]()
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
    if data:
        yield event, json.loads("\n".join(data))
