"""The few exception types the library raises; edges (CLI, UI, HTTP) turn them into user messages."""

from __future__ import annotations

import re
from urllib.parse import urlsplit


class RagError(Exception):
    """Base class for every error the library reports to a user."""


class ConfigError(RagError):
    """A setting is missing, contradictory or invalid."""


class CorpusError(RagError):
    """A corpus file cannot be read or holds a malformed record."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{message}")


class StoreError(RagError):
    """The vector store cannot be opened, read or written."""


class LLMUnavailableError(RagError):
    """The language model endpoint cannot be reached or keeps failing."""


class InvalidRequestError(RagError):
    """A question or option given by a caller is out of range."""


class NotFoundError(RagError):
    """Something a caller named (a paper id) is not in the store."""


class EmptyStoreError(RagError):
    """The store holds no papers, so there is nothing to answer from."""


class GenerationCancelled(RagError):
    """The caller went away (e.g. an HTTP client disconnected), so the answer stopped being generated."""


class BusyError(RagError):
    """Every generation slot is taken and the waiting line is full, or the wait timed out."""

    def __init__(self, message: str, queue_full: bool):
        super().__init__(message)
        self.queue_full = queue_full


# -- the one table of errors: HTTP status, error type and the message a person sees ------------------
class ErrorInfo:
    """How an edge reports an error: HTTP status, error type (the API's `error.type`), the library's
    message and the sentence a chat user sees."""

    __slots__ = ("status", "kind", "message", "user_message")

    def __init__(self, status: int, kind: str, message: str, user_message: str):
        self.status = status
        self.kind = kind
        self.message = message
        self.user_message = user_message

    def __repr__(self) -> str:
        return f"ErrorInfo({self.status}, {self.kind!r}, {self.message!r})"


# (class, HTTP status, error type, user message with {message}); the first matching class wins.
ERROR_TABLE: tuple[tuple[type[RagError], int, str, str], ...] = (
    (InvalidRequestError, 400, "invalid_request_error", "That request cannot be answered: {message}."),
    (NotFoundError, 404, "not_found", "Not found: {message}."),
    (EmptyStoreError, 503, "empty_store",
     "The paper store is empty. Ingest papers first (rag ingest), then ask again."),
    (LLMUnavailableError, 503, "llm_unavailable",
     "The language model is unreachable right now, so I cannot answer. ({message})"),
    (StoreError, 503, "store_unavailable", "The paper store cannot be read: {message}"),
    (ConfigError, 503, "config_error", "The service is misconfigured: {message}"),
    (CorpusError, 400, "corpus_error", "The corpus cannot be read: {message}"),
    (RagError, 500, "rag_error", "Something went wrong: {message}"),
)
_BUSY_MESSAGE = "Too many questions at once: {message}."


def describe(exc: BaseException) -> ErrorInfo:
    """Status, type and messages for any exception (a non-library one is an internal error).

    The messages are `public_message(exc)`: they go to HTTP clients and chat users, so they never
    carry credentials, endpoint paths or local file paths (the server log keeps the full text)."""
    message = public_message(exc)
    if isinstance(exc, BusyError):
        status, kind = (429, "queue_full") if exc.queue_full else (503, "queue_timeout")
        return ErrorInfo(status, kind, message, _BUSY_MESSAGE.format(message=message))
    for cls, status, kind, user in ERROR_TABLE:
        if isinstance(exc, cls):
            return ErrorInfo(status, kind, message, user.format(message=message))
    return ErrorInfo(500, "internal_error", "internal server error (see the server log)",
                     "Something went wrong on our side (see the server log).")


def error_from(kind: str, message: str) -> RagError:
    """The library exception for an error type read back from an API response."""
    if kind in ("queue_full", "queue_timeout"):
        return BusyError(message, queue_full=kind == "queue_full")
    for cls, _status, name, _user in ERROR_TABLE:
        if name == kind and cls is not CorpusError:
            return cls(message)
    return RagError(message)


# -- what an error may show outside the process ---------------------------------------------------
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s'\"<>`]+")
_POSIX_PATH = re.compile(r"(?<![\w.:/~\\-])~?/(?:[^\s/'\"`:;,()<>\[\]]+/)+[^\s/'\"`:;,()<>\[\]]*")
_WINDOWS_PATH = re.compile(r"\b[A-Za-z]:\\(?:[^\s\\'\"`:;,()<>]+\\)*[^\s\\'\"`:;,()<>]*")
_SECRET = re.compile(
    r"(?i)\b(bearer\s+|(?:api[_-]?key|access[_-]?token|token|secret|password|passwd|pwd)\s*[=:]\s*)"
    r"[^\s'\"&,;]+"
)
_PUBLIC_FIXED: tuple[tuple[type[RagError], str], ...] = (
    (StoreError, "see the server log for details"),  # these carry the store's path or URL
    (ConfigError, "see the server log for details"),  # and these local paths and settings
)


def safe_url(url: str, keep_path: bool = True) -> str:
    """`url` without credentials, query or fragment: scheme://host[:port][/path] (no path unless
    `keep_path`). Something that is not a URL with a host becomes "<url>"."""
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        return "<url>"
    if not parts.scheme or not host:
        return "<url>"
    netloc = f"[{host}]" if ":" in host else host
    netloc += f":{port}" if port is not None else ""
    path = parts.path.rstrip("/") if keep_path else ""
    return f"{parts.scheme.lower()}://{netloc}{path}"


def redact_secrets(text: str) -> str:
    """`text` with every URL's credentials and query removed and `key=...`/`Bearer ...` values
    masked; paths stay (for logs and the local terminal)."""
    text = _URL.sub(lambda m: safe_url(m.group(0)), text)
    return _SECRET.sub(lambda m: m.group(1) + "***", text)


def public_text(text: str) -> str:
    """`text` as an HTTP client or chat user may see it: URLs cut to scheme and host, absolute file
    paths to their last part, secrets masked."""
    text = _URL.sub(lambda m: safe_url(m.group(0), keep_path=False), text)
    text = _POSIX_PATH.sub(lambda m: "…/" + m.group(0).rstrip("/").rsplit("/", 1)[-1], text)
    text = _WINDOWS_PATH.sub(lambda m: "…\\" + m.group(0).rstrip("\\").rsplit("\\", 1)[-1], text)
    return _SECRET.sub(lambda m: m.group(1) + "***", text)


def public_message(exc: BaseException) -> str:
    """The message of a library error as it may leave the server (`describe` uses it): store and
    configuration errors name local paths and settings, so they say where to look instead."""
    for cls, fixed in _PUBLIC_FIXED:
        if isinstance(exc, cls):
            return fixed
    return public_text(str(exc))
