"""Cited question answering over ICLR 2025 paper abstracts."""

from importlib import metadata as _metadata

from .conversation import ChatTurn, Conversation
from .errors import RagError
from .events import Condensed, Error, Event, Final, Sources, Token, final_answer
from .pipeline import RAG
from .settings import Settings
from .types import Answer, Citation, Source

__all__ = [
    "RAG", "Settings", "Answer", "Citation", "Source", "RagError", "ChatTurn", "Conversation",
    "Event", "Condensed", "Sources", "Token", "Final", "Error", "final_answer", "__version__",
]

try:  # the one version string: the installed distribution's (pyproject.toml)
    __version__ = _metadata.version("iclr-rag")
except _metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
