"""The recurring prompt prefix: this project's pinning against llama-cpp-python's own prompt cache.

Every answer prompt starts with the same system message and instructions. rag/models/llm.py keeps the
KV cache of that prefix aside (`_restore_or_pin`, through llama.cpp's sequence state API) and puts it
back when another prompt (a condensing call, the warm-up) took the context in between.
llama-cpp-python's own answer to the same problem is `Llama.set_cache(LlamaRAMCache(...))`: after
every completion it saves the whole context state and, before the next one, loads the saved state
that shares the longest prefix with the new prompt.

Both are run here on the same sequence (answer prompts for several questions, a short unrelated
call before every third) with the bundled model, and without either, and the answer calls are timed to
their first token (max_tokens=1): wall ms (median, p90), prompt tokens evaluated, and the memory
each keeps for it.

    .venv/bin/python benchmarks/bench_prefix.py [--questions 12] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rag.answer.engine import answer_messages  # noqa: E402
from rag.models.llm import LocalLlamaCpp, bundled_gguf  # noqa: E402
from rag.types import Source  # noqa: E402

logger = logging.getLogger("bench_prefix")

TOPICS = [
    "graph invariance", "model merging", "diffusion sampling", "speculative decoding", "spurious correlations",
    "protein design", "reward models", "continual learning", "sparse attention", "machine unlearning",
    "mixture of experts", "time series forecasting", "3D reconstruction", "theorem proving", "tabular data",
    "watermarking",
]


def _sources(topic: str) -> list[Source]:
    return [
        Source(number=n, paper_id=f"{topic}-{n}", title=f"{topic.title()} study {n}",
               text=f"We study {topic} in setting {n}. Our method improves {topic} by {n} points on three "
                    f"benchmarks, and an analysis explains when {topic} fails.", score=1.0)
        for n in range(1, 6)
    ]


def _configure(llm: LocalLlamaCpp, config: str) -> None:
    llama = llm._llama()
    llama.reset()
    llm._pinned, llm._last_prompt = None, []
    if config == "pin":
        llama.set_cache(None)
        llm.__dict__.pop("_restore_or_pin", None)  # the class's method: the product's pinning
    else:
        llm._restore_or_pin = lambda llama, prompt: None  # type: ignore[method-assign]
        if config == "llama-cpp cache":
            from llama_cpp import LlamaRAMCache

            llama.set_cache(LlamaRAMCache(capacity_bytes=2 << 30))
        else:
            llama.set_cache(None)


def run(config: str, llm: LocalLlamaCpp, questions: int) -> dict[str, Any]:
    _configure(llm, config)
    walls, evaluated = [], []
    for i, topic in enumerate(TOPICS[:questions]):
        if i % 3 == 2:  # now and then another prompt in between: a condensing call, a warm-up
            llm.complete(f"Rewrite as one question: and what about {topic}?", max_tokens=8)
        t0 = time.perf_counter()
        llm.chat(answer_messages(f"How do ICLR 2025 papers approach {topic}?", _sources(topic)), max_tokens=1)
        if i:  # the first answer has nothing to reuse under any configuration
            walls.append((time.perf_counter() - t0) * 1000)
            evaluated.append(llm.last_timings["prompt_eval_tokens"])
    llama = llm._llama()
    kept = len(llm._pinned.state) if config == "pin" and llm._pinned is not None else (
        llama.cache.cache_size if llama.cache is not None else 0)
    return {"walls": walls, "evaluated": evaluated, "prompt_tokens": llm.last_timings["prompt_tokens"], "kept": kept}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=12, help="answer prompts per round (at most 16)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every configuration, interleaved")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    llm = LocalLlamaCpp(model_path=str(bundled_gguf()), n_ctx=2048, max_tokens=8)
    configs = ["pin", "llama-cpp cache", "none"]
    got: dict[str, dict[str, list[float]]] = {c: {"walls": [], "evaluated": [], "kept": []} for c in configs}
    prompt_tokens = 0
    for _ in range(args.rounds):
        for config in configs:  # interleaved, so a slow spell of the machine hits every configuration
            out = run(config, llm, min(args.questions, len(TOPICS)))
            got[config]["walls"] += out["walls"]
            got[config]["evaluated"] += out["evaluated"]
            got[config]["kept"].append(out["kept"] / 2**20)
            prompt_tokens = out["prompt_tokens"]
    rows = {}
    for config in configs:
        walls = sorted(got[config]["walls"])
        rows[config] = {
            "first token ms p50": round(statistics.median(walls), 1),
            "first token ms p90": round(walls[int(0.9 * (len(walls) - 1))], 1),
            "prompt tokens evaluated (median)": statistics.median(got[config]["evaluated"]),
            "state kept MiB": round(max(got[config]["kept"]), 1),
        }
    if args.json:
        print(json.dumps({"prompt_tokens": prompt_tokens, "configs": rows}, indent=2))
        return 0
    print(f"answer prompts of {prompt_tokens} tokens, an unrelated call before every third; "
          f"{args.rounds} rounds x {args.questions - 1} timed answers per configuration")
    head = ["configuration", *next(iter(rows.values()))]
    print(" | ".join(head))
    for config, row in rows.items():
        print(" | ".join([config, *(str(v) for v in row.values())]))
    base = rows["none"]["first token ms p50"]
    for config in ("pin", "llama-cpp cache"):
        print(f"{config}: {base / rows[config]['first token ms p50']:.2f}x faster to the first token than none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
