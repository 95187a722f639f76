"""The few exception types the library raises; edges (CLI, UI, HTTP) turn them into user messages."""

from __future__ import annotations


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


class EmptyStoreError(RagError):
    """The store holds no papers, so there is nothing to answer from."""


class BusyError(RagError):
    """Every generation slot is taken and the waiting line is full, or the wait timed out."""

    def __init__(self, message: str, queue_full: bool):
        super().__init__(message)
        self.queue_full = queue_full
