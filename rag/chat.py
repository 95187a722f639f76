"""Deprecated since 0.2: conversations moved to `rag.conversation`, the generation gate to
`rag.gate`, the live marker filter to `rag.citations`. This module re-exports the old names."""

import warnings

from .citations import LiveMarkerFilter
from .conversation import (
    ChatTurn,
    Conversation,
    chat,
    chat_stream,
    clean_llm_question,
    condense,
    depends_on_history,
    fallback_question,
    format_history,
    pointed_titles,
    reference_line,
    reference_titles,
    resolve_pointers,
    usable,
)
from .errors import BusyError
from .gate import GenerationGate

__all__ = [
    "BusyError", "ChatTurn", "Conversation", "GenerationGate", "LiveMarkerFilter", "chat", "chat_stream",
    "clean_llm_question", "condense", "depends_on_history", "fallback_question", "format_history",
    "pointed_titles", "reference_line", "reference_titles", "resolve_pointers", "usable",
]

warnings.warn(
    "rag.chat is deprecated; import from rag.conversation, rag.gate and rag.citations",
    DeprecationWarning,
    stacklevel=2,
)
