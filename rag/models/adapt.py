"""In-domain adaptation of the embedding model on the corpus's own text (never on evaluation labels).

all-MiniLM-L6-v2 was trained on general web pairs; ICLR abstracts have their own vocabulary
("diffusion", "grokking", "LoRA"). Adaptation teaches it which abstract text goes with which paper
title, with nothing but the papers in the store:

* pairs: each paper's title → one of its abstract windows (the same windows ingest embeds), a fresh
  random window per paper and epoch, so a batch never holds two pairs of one paper;
* loss: in-batch negatives (every other window in the batch is a negative for a title, and every
  other title for a window), cross-entropy over cosine × `scale`, both directions;
* AdamW with linear warm-up and decay; a fixed seed, so one corpus and one config give one model.

The adapted model is saved as a sentence-transformers directory with `adaptation.json` (base model
fingerprint, corpus fingerprint, config, time taken). `rag adapt` stores it with the store and
re-embeds the store with it (rag.pipeline); the store's manifest then names it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from rag.errors import ConfigError
from rag.models.embeddings import model_fingerprint
from rag.store.chroma import ModelRecord
from rag.text.chunking import Chunk

logger = logging.getLogger(__name__)


@dataclass
class AdaptReport:
    """What `rag adapt` made: the model (its directory and manifest record) and the re-embedded store."""

    model_dir: Path
    record: ModelRecord
    papers: int
    chunks: int
    training: dict[str, Any]


@dataclass(frozen=True)
class AdaptConfig:
    epochs: int = 1
    batch_size: int = 32
    learning_rate: float = 2e-5
    warmup: float = 0.1
    scale: float = 20.0
    seed: int = 0


def corpus_fingerprint(papers: Sequence[tuple[str, str, str]]) -> str:
    """(id, title, abstract) triples → a short hash, independent of their order."""
    digest = hashlib.sha256()
    for pid, title, abstract in sorted(papers):
        digest.update(f"{pid}\x00{title}\x00{abstract}\x01".encode())
    return digest.hexdigest()[:16]


def training_pairs(papers: Sequence[Sequence[Chunk]], rng: random.Random) -> list[tuple[str, str]]:
    """One (title, window sentences) pair per paper with a window, shuffled. The window is taken
    without the title it is embedded with, or the pair would match on the title alone."""
    pairs = []
    for chunks in papers:
        title = next((c.embed_text for c in chunks if c.kind == "title"), None)
        if not title:
            continue
        head = title + "\n"
        windows = [c.embed_text.removeprefix(head) for c in chunks if c.kind == "window"]
        if windows:
            pairs.append((title, rng.choice(windows)))
    rng.shuffle(pairs)
    return pairs


def require_training() -> None:
    """A clear error when the `adapt` extra (sentence-transformers, transformers) is not installed."""
    import importlib.util

    missing = [m for m in ("sentence_transformers", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(
            f"`rag adapt` trains with {' and '.join(missing)}, which this installation lacks: "
            "pip install 'iclr-rag[adapt]' (scripts/setup.sh installs it)"
        )


def adapt_model(
    base_dir: Path,
    papers: Sequence[Sequence[Chunk]],
    out_dir: Path,
    cfg: AdaptConfig,
    *,
    corpus: str,
    bf16: bool = False,
    progress: bool = False,
) -> Path:
    """Fine-tune the sentence-transformers model at `base_dir` on the papers' chunks; save to `out_dir`."""
    import torch

    require_training()
    from sentence_transformers import SentenceTransformer

    if sum(1 for chunks in papers if any(c.kind == "window" for c in chunks)) < 2:
        raise ValueError("adaptation needs at least two papers with an abstract")
    torch.manual_seed(cfg.seed)
    rng = random.Random(cfg.seed)
    model = SentenceTransformer(str(base_dir), device="cpu")
    model.train()
    per_epoch = math.ceil(sum(1 for c in papers if len(c) > 1) / cfg.batch_size)
    total = per_epoch * cfg.epochs
    warm = max(1, int(total * cfg.warmup))
    optimiser = torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    labels_cache: dict[int, torch.Tensor] = {}
    started, step, running = time.monotonic(), 0, 0.0
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="step", desc="adapt", dynamic_ncols=True)

    def encode(texts: list[str]) -> torch.Tensor:
        features = model.tokenize(texts)
        return torch.nn.functional.normalize(model(features)["sentence_embedding"].float(), dim=-1)

    for epoch in range(cfg.epochs):
        pairs = training_pairs(papers, rng)
        for start in range(0, len(pairs), cfg.batch_size):
            batch = pairs[start : start + cfg.batch_size]
            if len(batch) < 2:
                continue
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                titles = encode([t for t, _ in batch])
                windows = encode([w for _, w in batch])
            logits = titles @ windows.T * cfg.scale
            labels = labels_cache.setdefault(len(batch), torch.arange(len(batch)))
            loss = (torch.nn.functional.cross_entropy(logits, labels)
                    + torch.nn.functional.cross_entropy(logits.T, labels)) / 2
            optimiser.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            step += 1
            value = float(loss.detach())
            running = 0.9 * running + 0.1 * value if step > 1 else value
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{running:.3f}")
            if step % 10 == 0 or step == total:
                logger.info("adapt: epoch %d step %d/%d loss %.3f", epoch + 1, step, total, running)
    if bar is not None:
        bar.close()
    model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save(str(out_dir))
    record = {
        "base_model": str(base_dir),
        "base_fingerprint": model_fingerprint(base_dir),
        "corpus_fingerprint": corpus,
        "papers": len(papers),
        "steps": step,
        "final_loss": round(running, 4),
        "seconds": round(time.monotonic() - started, 1),
        "bf16": bf16,
        "config": asdict(cfg),
    }
    (out_dir / "adaptation.json").write_text(json.dumps(record, indent=2) + "\n")
    logger.info("adapted model saved to %s in %.0f s", out_dir, record["seconds"])
    return out_dir
