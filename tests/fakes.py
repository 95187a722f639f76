"""A scripted stand-in for the LLM, for tests of plumbing (streams, SSE, error mapping, condensing).

`ScriptedLLM` is a llama-index `CustomLLM` like `rag.llm.LocalLlamaCpp`: the engine and the
conversation call it exactly as they call the real model (`chat(messages, max_tokens=...)`,
`stream_chat(messages)`), and it replays its script instead of generating. Tests whose assertion
depends on what a real model writes keep using the real one (see tests/conftest.py `seed_rag`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from pydantic import PrivateAttr

from rag import RAG


@dataclass
class Broken:
    """A reply that streams `text`, then raises `error` (a model or connection failing mid-answer).
    A non-streaming call raises `error` at once."""

    text: str
    error: BaseException


Reply = Union[str, BaseException, Broken]
ReplyFn = Callable[[Any], Union[str, BaseException, Broken]]


@dataclass
class Call:
    """One request the fake received: which method, the messages (or the prompt) and the kwargs."""

    method: str  # chat, stream_chat, complete, stream_complete
    messages: list[ChatMessage]
    kwargs: dict[str, Any] = field(default_factory=dict)
    prompt: str | None = None  # complete / stream_complete only

    @property
    def text(self) -> str:
        """Everything the model was shown (all messages, or the prompt)."""
        if self.prompt is not None:
            return self.prompt
        return "\n\n".join(m.content or "" for m in self.messages)


class ScriptedLLM(CustomLLM):
    """Replays `replies` in order, one per call of complete/chat/stream_complete/stream_chat.

    - `replies`: a list whose items are a string (the reply), an exception (raised by the call; a
      streaming call raises it on the first read, as an HTTP client does) or `Broken(text, error)`
      (streams `text`, then raises); or a function called with the messages (chat) or the prompt
      (complete) that returns one of those. A call beyond the list fails the test.
    - Streams come in pieces of `piece_chars` characters (so markers like "[1]" get split across
      pieces), each after `delay` seconds.
    - `calls` records every request (method, messages or prompt, kwargs such as max_tokens).
    """

    script: Any = None
    piece_chars: int = 4
    delay: float = 0.0
    context_window: int = 4096
    num_output: int = 256

    _calls: list[Call] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _next: int = PrivateAttr(default=0)

    def __init__(self, replies: Sequence[Reply] | ReplyFn = (), **kwargs: Any):
        super().__init__(script=replies if callable(replies) else list(replies), **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "ScriptedLLM"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.context_window,
            num_output=self.num_output,
            is_chat_model=True,
            model_name="scripted",
        )

    @property
    def calls(self) -> list[Call]:
        with self._lock:
            return list(self._calls)

    @property
    def prompts(self) -> list[str]:
        """The text of each call (all its messages), in order."""
        return [c.text for c in self.calls]

    # -- the script ---------------------------------------------------------------------------
    def _reply(self, call: Call) -> Reply:
        with self._lock:
            self._calls.append(call)
            index = self._next
            self._next += 1
        if callable(self.script):
            return self.script(call.prompt if call.prompt is not None else call.messages)
        if index >= len(self.script):
            raise AssertionError(
                f"ScriptedLLM: call #{index + 1} ({call.method}) but the script has {len(self.script)} "
                f"replies; prompt was: {call.text[:300]!r}"
            )
        return self.script[index]

    def _text(self, reply: Reply) -> str:
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, Broken):
            raise reply.error
        return reply

    def _pieces(self, reply: Reply) -> ChatResponseGen:
        text = ""
        body = reply.text if isinstance(reply, Broken) else reply
        if isinstance(body, BaseException):
            raise body
        for i in range(0, len(body), max(1, self.piece_chars)):
            if self.delay:
                time.sleep(self.delay)
            delta = body[i : i + self.piece_chars]
            text += delta
            yield ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text), delta=delta)
        if isinstance(reply, Broken):
            raise reply.error

    # -- the llama-index LLM interface ----------------------------------------------------------
    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        text = self._text(self._reply(Call("chat", list(messages), dict(kwargs))))
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text))

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        reply = self._reply(Call("stream_chat", list(messages), dict(kwargs)))
        return self._pieces(reply)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        user = [ChatMessage(role=MessageRole.USER, content=prompt)]
        return CompletionResponse(text=self._text(self._reply(Call("complete", user, dict(kwargs), prompt))))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        user = [ChatMessage(role=MessageRole.USER, content=prompt)]
        reply = self._reply(Call("stream_complete", user, dict(kwargs), prompt))

        def gen() -> CompletionResponseGen:
            for r in self._pieces(reply):
                yield CompletionResponse(text=r.message.content or "", delta=r.delta)

        return gen()


def rag_with_llm(base: RAG, llm: Any, /, **groups: dict[str, Any]) -> RAG:
    """A `RAG` over `base`'s store and embedding model (read only: nothing re-ingested or re-loaded)
    whose LLM is `llm` (None: the configured one, built on first use). `groups` update settings
    groups, e.g. `answer={"mode": "generative"}`."""
    updates = {name: getattr(base.settings, name).model_copy(update=values) for name, values in groups.items()}
    rag = RAG(base.settings.model_copy(update=updates))
    # The RAG builds its components lazily from these; filling them in first shares base's.
    rag._store = base.store
    rag._seed_checked = True
    rag._embed = base.embed_model
    rag._model_record = base._model_record
    if llm is not None:
        rag._llm = llm
    return rag
