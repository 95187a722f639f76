"""A BERT encoder (the architecture of all-MiniLM-L6-v2 and of `rag adapt`'s models) run on torch
directly, with the model directory's own `tokenizer.json` on `tokenizers`.

Why not transformers' `AutoModel`: importing its model code pulls in `torch.distributed`,
`torch._dynamo`, SciPy and its generation utilities, ~3 s of CPU at every process start for a
6-layer encoder whose forward pass is the few lines below. tests/test_embeddings.py checks the
vectors against sentence-transformers' to 1e-5.
"""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path
from typing import Any, Iterator

import torch
from torch.nn import functional as F

from rag.errors import ConfigError
from rag.models.bert_numpy import check_config, load_tokenizer


class BertEncoder:
    """Token ids → last hidden states, and text → mean-pooled sentence vectors."""

    def __init__(self, model_dir: Path, weights: list[Path], max_length: int):
        config = check_config(model_dir)
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.layers = int(config["num_hidden_layers"])
        state: dict[str, Any] = {}
        for file in weights:
            if file.suffix == ".safetensors":
                from safetensors.torch import load_file

                state.update(load_file(str(file)))
            else:
                state.update(torch.load(file, map_location="cpu", weights_only=True))
        self.w = {name.removeprefix("bert."): tensor.float() for name, tensor in state.items()}
        missing = [n for n in ("embeddings.word_embeddings.weight", f"encoder.layer.{self.layers - 1}.output.dense.weight")
                   if n not in self.w]
        if missing:
            raise ConfigError(f"embedding model {model_dir}: weights lack {missing}")
        self.tokenizer = load_tokenizer(model_dir, max_length, config)
        self._int8: dict[str, Any] | None = None  # prepacked int8 weights, while `running("int8")`
        self._packed: dict[str, Any] = {}

    @contextlib.contextmanager
    def running(self, precision: str) -> Iterator[None]:
        """Run the forward passes inside this block in `precision`: "float32"; "bfloat16" (CPU
        autocast); or "int8": each dense layer's weights quantized per output channel and its inputs
        quantized per batch on the fly (fbgemm's dynamic int8 GEMM, full 8-bit range; the embeddings,
        attention, GELU and layer norms stay float32). The cosine to float32 is measured in
        tests/test_embeddings.py."""
        if precision == "bfloat16":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                yield
        elif precision == "int8":
            if not self._packed:
                self._packed = {name: self._pack(name) for name in self._dense_names()}
            self._int8 = self._packed
            try:
                yield
            finally:
                self._int8 = None
        else:
            yield

    def _dense_names(self) -> list[str]:
        return [n.removesuffix(".weight") for n, t in self.w.items()
                if n.startswith("encoder.layer.") and n.endswith(".weight") and t.dim() == 2]

    def _pack(self, name: str) -> Any:
        weight = self.w[name + ".weight"]
        scales = (weight.abs().amax(1) / 127.0).clamp(min=1e-12).double()
        zero = torch.zeros(weight.shape[0], dtype=torch.long)
        with warnings.catch_warnings():  # quantized tensors are deprecated upstream; torch is pinned
            warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
            q = torch.quantize_per_channel(weight, scales, zero, 0, torch.qint8)
        return torch.ops.quantized.linear_prepack(q, self.w[name + ".bias"])

    def _norm(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return F.layer_norm(x, x.shape[-1:], self.w[name + ".weight"], self.w[name + ".bias"], self.eps)

    def _linear(self, x: torch.Tensor, name: str) -> torch.Tensor:
        if self._int8 is not None:
            out: torch.Tensor = torch.ops.quantized.linear_dynamic(x, self._int8[name], False)
            return out
        return F.linear(x, self.w[name + ".weight"], self.w[name + ".bias"])

    def hidden(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Last hidden states (batch, length, width) of padded `ids` with attention `mask`."""
        w, (batch, length) = self.w, ids.shape
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
        x = self._norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        keep = mask.bool()[:, None, None, :]  # every query position attends to the real tokens only

        def split(t: torch.Tensor) -> torch.Tensor:  # (batch, length, width) → (batch, heads, length, head width)
            return t.view(batch, length, self.heads, -1).transpose(1, 2)

        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k, v = (split(self._linear(x, p + "attention.self." + n)) for n in ("query", "key", "value"))
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=keep).transpose(1, 2).reshape(batch, length, -1)
            x = self._norm(self._linear(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            inner = F.gelu(self._linear(x, p + "intermediate.dense"))
            x = self._norm(self._linear(inner, p + "output.dense") + x, p + "output.LayerNorm")
        return x

    def _forward(self, texts: list[str]) -> tuple[list[Any], torch.Tensor, torch.Tensor, torch.Tensor]:
        """(encodings, last hidden states, mean-pooled vectors, tokens each averages) of `texts`."""
        batch = self.tokenizer.encode_batch(texts)
        ids = torch.tensor([e.ids for e in batch])
        mask = torch.tensor([e.attention_mask for e in batch])
        hidden = self.hidden(ids, mask)
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        counts = weights.sum(1)
        pooled = ((hidden * weights).sum(1) / counts.clamp(min=1e-9)).float()  # mean over real tokens
        return batch, hidden, pooled, counts.squeeze(-1).float()

    def pooled(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean-pooled float32 vectors of `texts` (not normalised), and how many tokens each averages."""
        _, _, pooled, counts = self._forward(texts)
        return pooled, counts

    def pooled_with_spans(
        self, texts: list[str], spans: list[list[tuple[int, int]]]
    ) -> tuple[torch.Tensor, list[list[torch.Tensor]]]:
        """Mean-pooled vectors of `texts` (not normalised), and for each text the mean of the hidden
        states of the tokens inside each of its character `spans` (its sentences, read in the
        context of the whole text: "late chunking"). A span without a token gets a zero vector."""
        pooled, sums, counts = self.span_sums(texts, spans)
        parts = [[s / n if n else s for s, n in zip(own, many)] for own, many in zip(sums, counts)]
        return pooled, parts

    def span_sums(
        self, texts: list[str], spans: list[list[tuple[int, int]]]
    ) -> tuple[torch.Tensor, list[list[torch.Tensor]], list[list[int]]]:
        """Mean-pooled vectors of `texts`, and for each of each text's character `spans` the sum of
        the float32 hidden states of the word pieces inside it and how many there are (0: the span
        was cut off by the model's input limit, its sum is zero)."""
        batch, hidden, pooled, _ = self._forward(texts)
        sums: list[list[torch.Tensor]] = []
        counts: list[list[int]] = []
        for b, enc in enumerate(batch):
            offsets = torch.tensor(enc.offsets)
            word = torch.tensor(enc.special_tokens_mask) == 0
            own, many = [], []
            for start, end in spans[b]:
                inside = word & (offsets[:, 0] >= start) & (offsets[:, 1] <= end)
                own.append(hidden[b, inside].float().sum(0))
                many.append(int(inside.sum()))
            sums.append(own)
            counts.append(many)
        return pooled, sums, counts

    def encode(self, texts: list[str], normalize: bool) -> torch.Tensor:
        """Mean-pooled (and optionally L2-normalised) float32 vectors of `texts`, one row each."""
        pooled, _ = self.pooled(texts)
        return F.normalize(pooled, p=2, dim=1) if normalize else pooled
