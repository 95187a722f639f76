"""Input limits of a question and its conversation: the one place every entry point checks them
(library, CLI, HTTP API, OpenAI-compatible API, chat UI)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rag.errors import InvalidRequestError

MAX_QUESTION_CHARS = 2000


@dataclass(frozen=True)
class Limits:
    """Largest inputs accepted; the server's come from RAG_SERVER__MAX_* settings."""

    question_chars: int = MAX_QUESTION_CHARS
    history_messages: int = 20
    history_chars: int = 20000
    top_k: int = 50


DEFAULT_LIMITS = Limits()


def check_question(question: str | None, limits: Limits = DEFAULT_LIMITS) -> str:
    """The question without surrounding space; InvalidRequestError when empty or too long (the
    length of the text as sent, spaces included, as the API schema's maxLength states it)."""
    text = question or ""
    if len(text) > limits.question_chars:
        raise InvalidRequestError(f"the question has {len(text)} characters; the limit is {limits.question_chars}")
    q = text.strip()
    if not q:
        raise InvalidRequestError("the question is empty")
    return q


def check_request(
    question: str | None, history: Sequence[Any] = (), top_k: int | None = None, limits: Limits = DEFAULT_LIMITS
) -> str:
    """Check a question with its history (items with a `content`) and top_k; returns the question."""
    q = check_question(question, limits)
    if len(history) > limits.history_messages:
        raise InvalidRequestError(
            f"the history has {len(history)} messages; the limit is {limits.history_messages}"
        )
    chars = sum(len(_content(t)) for t in history)
    if chars > limits.history_chars:
        raise InvalidRequestError(f"the history has {chars} characters; the limit is {limits.history_chars}")
    if top_k is not None and not 1 <= top_k <= limits.top_k:
        raise InvalidRequestError(f"top_k must be between 1 and {limits.top_k}")
    return q


def _content(turn: Any) -> str:
    content = turn.get("content") if isinstance(turn, dict) else getattr(turn, "content", "")
    return content if isinstance(content, str) else str(content or "")
