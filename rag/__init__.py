"""Cited question answering over ICLR 2025 paper abstracts.

The public names are imported on first use (PEP 562), so that `rag --help`, `rag stats` and other
light commands do not pay for llama-index's import (~2.5 s) before they need it.
"""

from __future__ import annotations

import importlib
from importlib import metadata as _metadata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag.chat.conversation import ChatTurn, Conversation
    from rag.errors import RagError
    from rag.events import Condensed, Error, Event, Final, Sources, Token, final_answer
    from rag.pipeline import RAG
    from rag.settings import Settings
    from rag.types import Answer, Citation, Source

_WHERE = {
    "RAG": "pipeline", "Settings": "settings", "Answer": "types", "Citation": "types", "Source": "types",
    "RagError": "errors", "ChatTurn": "chat.conversation", "Conversation": "chat.conversation", "Event": "events",
    "Condensed": "events", "Sources": "events", "Token": "events", "Final": "events", "Error": "events",
    "final_answer": "events",
}

__all__ = [
    "RAG", "Settings", "Answer", "Citation", "Source", "RagError", "ChatTurn", "Conversation",
    "Event", "Condensed", "Sources", "Token", "Final", "Error", "final_answer", "__version__",
]

try:  # the one version string: the installed distribution's (pyproject.toml)
    __version__ = _metadata.version("iclr-rag")
except _metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'rag' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
