"""The same BERT encoder as rag.models.bert, on NumPy: for the few texts an answer embeds (its question);
and what both read without torch (the model's config and tokenizer).

Importing torch costs ~2.4 s of a cold `rag ask` whose only embedding is one question of ~20 word
pieces (the quotes' vectors are read from the store, rag.store.sentence_vectors). This forward pass reads
the same safetensors weights with `safetensors.numpy` and runs in a few milliseconds; torch stays for
bulk work (ingest, `rag adapt`, large batches), imported on first use. tests/test_embeddings.py checks
that both give the same vectors (to 1e-5).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from rag.errors import ConfigError

SUPPORTED = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}


def check_config(model_dir: Path) -> dict[str, Any]:
    """The model's config.json, when it describes an encoder this module runs; else a ConfigError."""
    try:
        config: dict[str, Any] = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{model_dir}: no readable config.json ({exc})") from exc
    found = {**config, "position_embedding_type": config.get("position_embedding_type", "absolute")}
    wrong = {k: found.get(k) for k, v in SUPPORTED.items() if found.get(k) != v}
    if wrong:
        raise ConfigError(f"embedding model {model_dir}: {wrong} is not supported (a BERT encoder is: {SUPPORTED})")
    if not (model_dir / "tokenizer.json").exists():
        raise ConfigError(f"embedding model {model_dir}: tokenizer.json is missing")
    return config


def load_tokenizer(model_dir: Path, max_length: int, config: dict[str, Any]) -> Any:
    """The model's own tokenizer.json, truncating at `max_length`, padding batches to their longest."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length)
    pad_id = int(config.get("pad_token_id") or 0)
    tokenizer.enable_padding(pad_id=pad_id, pad_token=tokenizer.id_to_token(pad_id) or "[PAD]")
    return tokenizer

# erf by Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7, below float32 rounding of BERT's activations):
# NumPy has no erf, and SciPy's import costs what this module saves.
_P = 0.3275911
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erf(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    t = 1.0 / (1.0 + _P * a)
    poly = t * (_A[0] + t * (_A[1] + t * (_A[2] + t * (_A[3] + t * _A[4]))))
    out: np.ndarray = np.sign(x) * (1.0 - poly * np.exp(-a * a))
    return out


def _gelu(x: np.ndarray) -> np.ndarray:  # the exact ("erf") GELU that BERT's config names "gelu"
    return 0.5 * x * (1.0 + _erf(x * np.float32(0.7071067811865476)))


class NumpyEncoder:
    """Token ids → last hidden states, and text → mean-pooled sentence vectors, in float32 NumPy."""

    def __init__(self, model_dir: Path, weights: list[Path], config: dict[str, Any], tokenizer: Any):
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.layers = int(config["num_hidden_layers"])
        state: dict[str, np.ndarray] = {}
        for file in weights:
            if file.suffix != ".safetensors":
                raise ConfigError(f"{file}: the NumPy encoder reads .safetensors weights only")
            from safetensors.numpy import load_file

            state.update(load_file(str(file)))
        self.w = {name.removeprefix("bert."): np.ascontiguousarray(t, dtype=np.float32) for name, t in state.items()}
        for name in [n for n in self.w if n.endswith(".weight") and self.w[n].ndim == 2 and "embeddings" not in n]:
            self.w[name] = np.ascontiguousarray(self.w[name].T)  # (in, out): x @ w
        self.tokenizer = tokenizer

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        out: np.ndarray = (x - mean) / np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]
        return out

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[name + ".weight"] + self.w[name + ".bias"]

    def hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Last hidden states (batch, length, width) of padded `ids` with attention `mask`."""
        w, (batch, length) = self.w, ids.shape
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
        x = self._norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        blocked = np.where(mask.astype(bool), 0.0, -np.inf).astype(np.float32)[:, None, None, :]

        def split(t: np.ndarray) -> np.ndarray:  # (batch, length, width) → (batch, heads, length, head width)
            return t.reshape(batch, length, self.heads, -1).transpose(0, 2, 1, 3)

        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k, v = (split(self._linear(x, p + "attention.self." + n)) for n in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(q.shape[-1])) + blocked
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            ctx = (scores / scores.sum(-1, keepdims=True)) @ v
            ctx = ctx.transpose(0, 2, 1, 3).reshape(batch, length, -1)
            x = self._norm(self._linear(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            inner = _gelu(self._linear(x, p + "intermediate.dense"))
            x = self._norm(self._linear(inner, p + "output.dense") + x, p + "output.LayerNorm")
        return x

    def encode(self, texts: list[str], normalize: bool) -> np.ndarray:
        """Mean-pooled (and optionally L2-normalised) float32 vectors of `texts`, one row each."""
        batch = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in batch], dtype=np.int64)
        mask = np.array([e.attention_mask for e in batch], dtype=np.float32)
        hidden = self.hidden(ids, mask)
        pooled = (hidden * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        if normalize:
            pooled = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        out: np.ndarray = pooled.astype(np.float32)
        return out
