"""Retrieval ablation in memory: how each ranking change moves topics_dev and descriptions_dev.

Re-embeds the 2,115 papers under several chunkings with the bundled all-MiniLM-L6-v2 (bf16 autocast
where the CPU has it; ~10 min on 2 cores, cached under --cache), builds BM25 variants with bm25s, and
scores every combination exactly (every chunk of every paper), with 95 % bootstrap CIs:

    .venv/bin/python benchmarks/retrieval_ablation.py [--cache /tmp/ablation-cache]

Rows: dense over the whole title+abstract (one vector, truncated at 256 word pieces) vs sentence
windows (title + 3 sentences, stride 2) with a title-only vector, paper score = mean of its two best
chunk cosines; BM25 plain vs title x3 (k1 1.2, b 0.5); RRF (k 60); Rocchio feedback (0.5 x mean
vector of the top 5 fused papers, second dense pass, fused again). The product's own figures come
from benchmarks/bench_retrieval.py, which runs the shipped retriever on a real store.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from evals.metrics import bootstrap_ci  # noqa: E402
from rag.models.embeddings import bf16_supported, bundled_model_path  # noqa: E402
from rag.text.citations import split_sentences  # noqa: E402

logger = logging.getLogger("retrieval_ablation")
SHARED = REPO.parent / "shared"


def windows(title: str, abstract: str, w: int, stride: int) -> list[str]:
    sents = [s for s in split_sentences(abstract) if s.strip()] or [abstract]
    starts = list(range(0, max(1, len(sents) - w + 1), stride))
    if starts[-1] + w < len(sents):
        starts.append(len(sents) - w)
    return [title + "\n" + " ".join(sents[s : s + w]) for s in starts]


class Lab:
    def __init__(self, cache: Path):
        self.cache = cache
        cache.mkdir(parents=True, exist_ok=True)
        self.papers = [json.loads(x) for x in (SHARED / "data/iclr2025/papers.jsonl").open()]
        self.idx = {p["id"]: i for i, p in enumerate(self.papers)}
        self.sets = {
            name: [json.loads(x) for x in (SHARED / f"evalsets/{name}.jsonl").open()]
            for name in ("topics_dev", "descriptions_dev")
        }
        self._model = None

    def embed(self, texts: list[str], tag: str) -> np.ndarray:
        key = hashlib.sha1("\x00".join(texts).encode()).hexdigest()[:12]
        path = self.cache / f"{tag}-{key}.npy"
        if path.exists():
            return np.load(path)
        import torch
        from sentence_transformers import SentenceTransformer

        if self._model is None:
            self._model = SentenceTransformer(str(bundled_model_path()), device="cpu")
        logger.info("embedding %d texts (%s)", len(texts), tag)
        dtype = torch.bfloat16 if bf16_supported() else torch.float32
        with torch.inference_mode(), torch.autocast("cpu", dtype=dtype, enabled=dtype == torch.bfloat16):
            vecs = self._model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=True)
        np.save(path, vecs.astype(np.float32))
        return vecs

    def chunks(self, kind: str) -> tuple[np.ndarray, np.ndarray]:
        texts, owner = [], []
        for i, p in enumerate(self.papers):
            parts = [p["title"] + "\n" + p["abstract"]] if kind == "whole" else windows(p["title"], p["abstract"], 3, 2)
            texts += parts
            owner += [i] * len(parts)
        vecs, owner_arr = self.embed(texts, kind), np.array(owner)
        if kind == "windows+title":
            titles = self.embed([p["title"] for p in self.papers], "titles")
            vecs = np.vstack([vecs, titles])
            owner_arr = np.concatenate([owner_arr, np.arange(len(self.papers))])
        return vecs, owner_arr

    def bm25(self, boost: int, k1: float, b: float):
        import bm25s
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
        docs = [" ".join([p["title"]] * boost + [p["abstract"]]) for p in self.papers]
        index = bm25s.BM25(k1=k1, b=b)
        index.index(bm25s.tokenize(docs, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)

        def scores(q: str) -> np.ndarray:
            tok = bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False)
            words = bm25s.tokenization.convert_tokenized_to_string_list(tok)[0]
            return index.get_scores(words) if words else np.zeros(len(self.papers))

        return scores


def paper_scores(sims: np.ndarray, owner: np.ndarray, n: int, top2: bool) -> np.ndarray:
    best = np.full(n, -1.0)
    if not top2:
        np.maximum.at(best, owner, sims)
        return best
    second = np.full(n, -1.0)
    for j in np.argsort(-sims):
        o = owner[j]
        if best[o] == -1.0:
            best[o] = sims[j]
        elif second[o] == -1.0:
            second[o] = sims[j]
    return (best + np.where(second == -1.0, best, second)) / 2


def order(scores: np.ndarray, tiebreak: np.ndarray | None = None) -> np.ndarray:
    keys = (np.arange(len(scores)),) if tiebreak is None else (tiebreak,)
    return np.lexsort((*keys, -np.round(scores, 12)))


def rrf(bm25_rank: np.ndarray, dense_rank: np.ndarray, n: int, k: int = 60, depth: int = 200) -> np.ndarray:
    s = np.zeros(n)
    for r in (bm25_rank, dense_rank):
        s[r[:depth]] += 1.0 / (k + np.arange(1, depth + 1))
    pos = np.empty(n, dtype=int)
    pos[bm25_rank] = np.arange(n)
    return order(s, pos)  # ties go to the BM25 order, as in rag/retrieval/retrieve.py


def metrics(rank: np.ndarray, gold: set[int]) -> tuple[float, float, float]:
    top = list(rank[:10])
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(top) if d in gold)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(10, len(gold))))
    rr = next((1 / (i + 1) for i, d in enumerate(rank[:100]) if d in gold), 0.0)
    return dcg / idcg, len(set(top) & gold) / len(gold), rr


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/ablation-cache"), help="embedding cache directory")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    lab = Lab(args.cache)
    n = len(lab.papers)
    queries = [q["query"] for s in lab.sets.values() for q in s]
    qv = dict(zip(queries, lab.embed(queries, "queries")))
    bm_plain, bm_title = lab.bm25(1, 1.5, 0.75), lab.bm25(3, 1.2, 0.5)
    whole, whole_owner = lab.chunks("whole")
    win, win_owner = lab.chunks("windows+title")
    n_win = len(win) - n
    only_windows = np.arange(len(win)) < n_win
    pvec = np.zeros((n, win.shape[1]))
    np.add.at(pvec, win_owner[only_windows], win[only_windows])
    pvec /= np.linalg.norm(pvec, axis=1, keepdims=True)

    def dense(vec, chunks):
        vecs, owner, top2 = chunks
        return order(paper_scores(vecs @ vec, owner, n, top2))

    configs = {
        "dense whole (baseline)": lambda q: dense(qv[q], (whole, whole_owner, False)),
        "dense windows+title, top-2 mean": lambda q: dense(qv[q], (win, win_owner, True)),
        "BM25 plain (baseline)": lambda q: order(bm_plain(q)),
        "BM25 title x3, k1 1.2, b 0.5": lambda q: order(bm_title(q)),
        "RRF baseline (whole + plain BM25)": lambda q: rrf(order(bm_plain(q)), dense(qv[q], (whole, whole_owner, False)), n),
        "RRF windows+title + BM25 title x3": lambda q: rrf(order(bm_title(q)), dense(qv[q], (win, win_owner, True)), n),
    }

    def with_feedback(q: str) -> np.ndarray:
        b = order(bm_title(q))
        first = rrf(b, dense(qv[q], (win, win_owner, True)), n)
        moved = qv[q] + 0.5 * pvec[first[:5]].mean(0)
        return rrf(b, dense(moved / np.linalg.norm(moved), (win, win_owner, True)), n)

    configs["+ Rocchio feedback (shipped)"] = with_feedback
    print(f"{'configuration':38s} {'topics nDCG@10':>22s} {'topics R@10':>12s} {'desc MRR':>22s}")
    for name, rank_fn in configs.items():
        cols = []
        for set_name in ("topics_dev", "descriptions_dev"):
            rows = np.array(
                [metrics(rank_fn(q["query"]), {lab.idx[g] for g in q["gold_ids"]}) for q in lab.sets[set_name]]
            )
            cols.append(rows)
        t, d = cols
        lo, hi = bootstrap_ci(t[:, 0])
        dlo, dhi = bootstrap_ci(d[:, 2])
        print(
            f"{name:38s} {t[:, 0].mean():.3f} [{lo:.3f}, {hi:.3f}] {t[:, 1].mean():12.3f} "
            f"{d[:, 2].mean():.3f} [{dlo:.3f}, {dhi:.3f}]",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
