"""Local generation benchmark: llama.cpp prefill/decode speed per CPU build against the cores' FLOP
rate, and one generative answer profiled end to end (retrieval, answerability, excerpting, template,
prefill, decode, citation checks).

Each llama.cpp build runs in its own child process (one process can load one libllama): `--build
NAME=DIR` puts DIR (a `pip install --target DIR --no-deps <wheel>` of llama-cpp-python) first on
PYTHONPATH; `--build NAME=venv` uses the build installed in this venv.

    .venv/bin/python benchmarks/bench_generation.py --build avx2=/tmp/llama-avx2 --build avx512=venv \
        [--answers 7] [--prompt-tokens 700] [--threads 2] [--out reports/bench_generation.json]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

logger = logging.getLogger("bench_generation")

# Questions the built-in 19-paper seed corpus answers (each gets 5 sources and an LLM call).
QUESTIONS = [
    "Which paper learns graph invariance by removing spurious features?",
    "How can synthetic data help LLM post-training?",
    "Which paper proposes a lifelong learning agent for formal theorem proving?",
    "How can spurious correlations in zero-shot multimodal models be mitigated?",
    "Which benchmark evaluates code generation in many programming languages?",
    "How does MRAG-Bench evaluate retrieval-augmented multimodal models?",
    "How can preference models be made robust to strong preferences?",
    "How do deep networks break the curse of dimensionality?",
]

WARM_UP = "What does protein language model fitness depend on?"  # loads the model; not counted


# -- the cores' FLOP rate ---------------------------------------------------------------------------
def gemm_gflops(threads: int, n: int = 2048, seconds: float = 3.0) -> dict[str, float]:
    """Best fp32 GEMM rate of torch and numpy on `threads` threads (GFLOP/s = 2 n^3 / time)."""
    import numpy as np
    import torch

    torch.set_num_threads(threads)
    out: dict[str, float] = {}
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    best, best_cpu, end = float("inf"), float("inf"), time.perf_counter() + seconds
    while time.perf_counter() < end:
        t, c = time.perf_counter(), time.process_time()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
    out["torch_fp32_gflops"] = 2 * n**3 / best / 1e9
    out["torch_fp32_gflops_per_cpu_s"] = 2 * n**3 / best_cpu / 1e9
    os.environ["OMP_NUM_THREADS"] = str(threads)  # numpy's BLAS reads it when first used
    x, y = np.random.rand(n, n).astype(np.float32), np.random.rand(n, n).astype(np.float32)
    x @ y
    best, end = float("inf"), time.perf_counter() + seconds
    while time.perf_counter() < end:
        t = time.perf_counter()
        x @ y
        best = min(best, time.perf_counter() - t)
    out["numpy_fp32_gflops"] = 2 * n**3 / best / 1e9
    return out


# -- child: llama.cpp speed of one build ------------------------------------------------------------
def prompt_tokens(llama: Any, n: int) -> list[int]:
    """About `n` tokens of a real answer prompt (the seed abstracts as numbered sources)."""
    from rag.ingest.corpus import load_many, seed_path

    papers = load_many([seed_path()]).papers
    text = "\n\n".join(f"[{i + 1}] {p.title}\n{p.abstract}" for i, p in enumerate(papers))
    tokens = llama.tokenize(text.encode(), add_bos=True, special=False)
    return tokens[:n]


def llama_speed(threads: int, n_prompt: int, n_decode: int, repeats: int) -> dict[str, Any]:
    """Prefill and decode tok/s of the bundled SmolLM2 with the llama.cpp build this process loads."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from rag import Settings
    from rag.models.llm import bundled_gguf, check_cpu_build, weights_copy

    check_cpu_build()
    import llama_cpp

    cfg = Settings().llm  # RAG_LLM__LOCAL_WEIGHTS and RAG_LLM__FLASH_ATTN of this configuration
    path = bundled_gguf() if cfg.local_weights == "as_is" else weights_copy(bundled_gguf(), cfg.local_weights)
    llama = llama_cpp.Llama(
        model_path=str(path),
        n_ctx=4096,
        n_threads=threads,
        n_threads_batch=threads,
        n_batch=512,
        flash_attn=cfg.flash_attn,
        verbose=False,
    )
    tokens = prompt_tokens(llama, n_prompt)
    prefill, prefill_cpu = [], []
    for _ in range(repeats + 1):  # the first run warms caches and is dropped
        llama.reset()
        t, c = time.perf_counter(), time.process_time()
        llama.eval(tokens)
        prefill.append(time.perf_counter() - t)
        prefill_cpu.append(time.process_time() - c)
    prefill, prefill_cpu = prefill[1:], prefill_cpu[1:]
    decode, decode_cpu = [], []
    for _ in range(repeats):
        llama.reset()
        llama.eval(tokens)
        t, c, made = time.perf_counter(), time.process_time(), 0
        for _tok in llama.generate(tokens, temp=0.0):  # the prompt is cached: decoding only
            made += 1
            if made >= n_decode:
                break
        decode.append((time.perf_counter() - t) / made)
        decode_cpu.append((time.process_time() - c) / made)
    n_params = llama_cpp.llama_model_n_params(llama.model)
    embed_params = llama.n_vocab() * llama.n_embd()
    p50 = statistics.median(prefill)
    return {
        "weights": cfg.local_weights,
        "flash_attn": cfg.flash_attn,
        "system_info": llama_cpp.llama_print_system_info().decode(),
        "prompt_tokens": len(tokens),
        "prefill_s_p50": p50,
        "prefill_tok_s": len(tokens) / p50,
        "decode_tok_s": 1 / statistics.median(decode),
        # CPU-seconds (all threads): robust to other processes on a shared machine
        "prefill_tok_per_cpu_s": len(tokens) / min(prefill_cpu),
        "decode_tok_per_cpu_s": 1 / min(decode_cpu),
        "n_params": n_params,
        "embedding_params": embed_params,
    }


# -- child: one generative answer, stage by stage ---------------------------------------------------
class Stages:
    """Wall time per stage of the current answer, by wrapping the functions that do each stage."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self.cpu_ms: dict[str, float] = {}  # process CPU time (all threads) during the stage
        self.first_chunk_ms: float | None = None

    def add(self, stage: str, ms: float, cpu_ms: float = 0.0) -> None:
        self.ms[stage] = self.ms.get(stage, 0.0) + ms
        self.cpu_ms[stage] = self.cpu_ms.get(stage, 0.0) + cpu_ms

    def wrap(self, owner: Any, name: str, stage: str) -> None:
        fn: Callable[..., Any] = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            t, c = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.add(stage, (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000)

        setattr(owner, name, timed)

    def wrap_stream(self, owner: Any, name: str, stage: str) -> None:
        """A generator function: time to its first item, and its whole time minus the consumer's."""
        fn: Callable[..., Any] = getattr(owner, name)
        stages = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            it = iter(fn(*args, **kwargs))
            stages.add(stage + " (call)", (time.perf_counter() - t) * 1000)

            def gen() -> Any:
                first = True
                while True:
                    t, c = time.perf_counter(), time.process_time()
                    try:
                        item = next(it)
                    except StopIteration:
                        stages.add(stage, (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000)
                        return
                    ms = (time.perf_counter() - t) * 1000
                    stages.add(stage, ms, (time.process_time() - c) * 1000)
                    if first:
                        stages.first_chunk_ms = ms
                        first = False
                    yield item

            return gen()

        setattr(owner, name, timed)


def answer_profile(n_answers: int, store: Path | None) -> dict[str, Any]:
    """Generative answers over 5 sources on the seed corpus, timed per stage (after one warm-up)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import rag.answer.engine
    import rag.grounding.verify
    import rag.models.llm
    import rag.prompts
    import rag.retrieval.retrieve
    import rag.store.vectors
    from rag import RAG, Settings
    from rag.text.citations import split_sentences

    if os.environ.get("BENCH_PROMPTS_DIR"):  # compare prompt wordings: a folder with other templates
        rag.prompts.PROMPTS_DIR = Path(os.environ["BENCH_PROMPTS_DIR"])
        rag.prompts.load.cache_clear()

    stages = Stages()
    stages.wrap(rag.retrieval.retrieve.PaperRetriever, "retrieve", "retrieval")
    stages.wrap(rag.answer.engine, "assess", "answerability")
    stages.wrap(rag.answer.engine, "excerpt_sources", "excerpting")
    stages.wrap(rag.answer.engine, "answer_messages", "template")
    stages.wrap(rag.grounding.verify.SentenceFilter, "feed", "citation checks")
    stages.wrap(rag.grounding.verify.SentenceFilter, "finish", "citation checks")
    stages.wrap(rag.store.vectors.VectorCache, "embed", "embedding (within the above)")
    stages.wrap_stream(rag.models.llm.LocalLlamaCpp, "stream_chat", "llm")

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            store={"path": store or Path(tmp) / "chroma"},
            retrieval={"top_k": 5},
            answer={"mode": "generative"},
        )
        pipe = RAG(settings)
        t = time.perf_counter()
        pipe.retriever  # noqa: B018 - seeds the store, loads the embedder
        warmed = pipe.engine.warm()
        llm = pipe.llm
        setup_s = time.perf_counter() - t
        rows = []
        for i, question in enumerate([WARM_UP] + QUESTIONS[:n_answers]):
            stages.ms, stages.cpu_ms, stages.first_chunk_ms = {}, {}, None
            t, c = time.perf_counter(), time.process_time()
            answer = pipe.ask(question)
            wall = (time.perf_counter() - t) * 1000
            cpu = (time.process_time() - c) * 1000
            perf = dict(getattr(llm, "last_timings", {}) or {})
            row = {
                "question": question,
                "mode": answer.mode,
                "first_token_ms": answer.timings.first_token_ms,
                "total_ms": answer.timings.total_ms,
                "wall_ms": wall,
                "cpu_ms": cpu,
                "stages_ms": dict(stages.ms),
                "stages_cpu_ms": dict(stages.cpu_ms),
                "llm_first_chunk_ms": stages.first_chunk_ms,
                "llama": perf,
                "completion_tokens": answer.completion_tokens,
                "removed_unsupported": answer.removed_unsupported,
                # sentences the model wrote that the answer shows (each passed the support check)
                "shown_sentences": len(split_sentences(answer.text)) if answer.mode == "generative" else 0,
                "raw_text": answer.raw_text,
                "text": answer.text,
            }
            if i == 0:
                logger.info("warm-up answer: %.0f ms (not counted)", wall)
                continue
            rows.append(row)
            logger.info(
                "%-70s first %6.0f ms total %6.0f ms (%s)",
                question[:70],
                row["first_token_ms"] or -1,
                row["total_ms"],
                answer.mode,
            )
    return {"setup_s": setup_s, "warmed_sentences": warmed, "answers": rows}


# -- parent -------------------------------------------------------------------------------------------
def run_child(name: str, where: str, args: argparse.Namespace, extra: dict[str, str]) -> dict[str, Any]:
    env = {**os.environ, **extra}
    if where != "venv":
        env["PYTHONPATH"] = os.pathsep.join([where, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cmd = [
        sys.executable,
        __file__,
        "--child",
        "--threads",
        str(args.threads),
        "--prompt-tokens",
        str(args.prompt_tokens),
        "--decode-tokens",
        str(args.decode_tokens),
        "--repeats",
        str(args.repeats),
        "--answers",
        str(args.answers),
    ]
    logger.info("%s: build %s, %s", name, where, extra or "default settings")
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report(results: dict[str, Any]) -> None:
    flops = results["flops"]
    peak = max(v for k, v in flops.items() if k.endswith("_gflops"))
    peak_cpu = flops["torch_fp32_gflops_per_cpu_s"]
    print(
        f"\nfp32 GEMM on {results['threads']} threads: " + ", ".join(f"{k} {v:.1f}" for k, v in flops.items())
    )
    print(
        f"\n{'build':10} {'prefill tok/s':>14} {'decode tok/s':>13} {'GFLOP/s':>8} {'/ GEMM':>7}"
        f" | per CPU-second: {'prefill tok':>11} {'decode tok':>10} {'GFLOP':>6} {'/ GEMM':>7}"
    )
    for name, res in results["builds"].items():
        s = res["speed"]
        if not s:
            continue
        per_token = 2 * s["n_params"]  # FLOPs = 2 x params x tokens
        gflops = per_token * s["prefill_tok_s"] / 1e9
        gflops_cpu = per_token * s["prefill_tok_per_cpu_s"] / 1e9
        s["prefill_gflops"], s["prefill_gflops_per_cpu_s"] = gflops, gflops_cpu
        s["prefill_gflops_non_embedding"] = (
            2 * (s["n_params"] - s["embedding_params"]) * s["prefill_tok_s"] / 1e9
        )
        print(
            f"{name:10} {s['prefill_tok_s']:14.0f} {s['decode_tok_s']:13.1f} {gflops:8.1f} {gflops / peak:7.2f}"
            f" | {'':16}{s['prefill_tok_per_cpu_s']:11.0f} {s['decode_tok_per_cpu_s']:10.1f} "
            f"{gflops_cpu:6.1f} {gflops_cpu / peak_cpu:7.2f}"
        )
    for name, res in results["builds"].items():
        rows = res["answers"]["answers"]
        if not rows:
            continue
        first = [r["first_token_ms"] for r in rows if r["first_token_ms"] is not None]
        print(
            f"\n{name}: {len(rows)} generative answers over 5 sources "
            f"(first token p50 {p50(first) / 1000:.2f} s, total p50 "
            f"{p50([r['total_ms'] for r in rows]) / 1000:.2f} s)"
        )
        shown = sum(r["shown_sentences"] for r in rows)
        written = shown + sum(r["removed_unsupported"] or 0 for r in rows)
        print(
            f"  generative answers {sum(r['mode'] == 'generative' for r in rows)}/{len(rows)} (the rest: "
            f"no sentence passed the support check, evidence shown); model sentences shown {shown} of "
            f"{written} ({shown / max(written, 1):.0%})"
        )
        names = sorted({k for r in rows for k in r["stages_ms"]})
        for stage in names:
            wall = p50([r["stages_ms"].get(stage, 0.0) for r in rows])
            cpu = p50([r["stages_cpu_ms"].get(stage, 0.0) for r in rows])
            print(f"  {stage:32} p50 {wall:8.1f} ms (CPU {cpu:8.1f} ms)")
        print(
            f"  {'whole answer':32} p50 {p50([r['wall_ms'] for r in rows]):8.1f} ms "
            f"(CPU {p50([r['cpu_ms'] for r in rows]):8.1f} ms)"
        )
        llama = [r["llama"] for r in rows if r["llama"]]
        if llama:
            print(f"  {'llm first chunk':32} p50 {p50([r['llm_first_chunk_ms'] or 0 for r in rows]):8.1f} ms")
            for key in ("prompt_tokens", "prompt_eval_tokens", "prompt_eval_ms", "eval_tokens", "eval_ms"):
                if key in llama[0]:
                    print(f"  llama {key:26} p50 {p50([x[key] for x in llama]):8.1f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--build",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="a llama-cpp-python install dir to compare (repeatable); DIR 'venv': this venv's",
    )
    ap.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="NAME[=VAR=VALUE,...]",
        help="settings to compare (repeatable), e.g. f16=RAG_LLM__LOCAL_WEIGHTS=f16,RAG_LLM__FLASH_ATTN=false",
    )
    ap.add_argument("--threads", type=int, default=2, help="llama.cpp and GEMM threads")
    ap.add_argument("--prompt-tokens", type=int, default=700, help="prefill length")
    ap.add_argument("--decode-tokens", type=int, default=64, help="tokens decoded per decode run")
    ap.add_argument("--repeats", type=int, default=3, help="runs per speed figure (median; 0: no speed runs)")
    ap.add_argument("--answers", type=int, default=7, help="profiled generative answers per build (0: none)")
    ap.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose or not args.child else logging.WARNING,
        format="%(asctime)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    for noisy in ("httpx", "chromadb", "sentence_transformers", "rag"):
        logging.getLogger(noisy).setLevel(logging.WARNING)

    if args.child:
        out: dict[str, Any] = {"speed": None}
        if args.repeats:
            out["speed"] = llama_speed(args.threads, args.prompt_tokens, args.decode_tokens, args.repeats)
        out["answers"] = answer_profile(args.answers, None) if args.answers else {"answers": []}
        print(json.dumps(out))
        return 0

    builds = dict(b.split("=", 1) for b in args.build) or {"venv": "venv"}
    configs = []
    for spec in args.config or ["default"]:
        name, _, rest = spec.partition("=")
        configs.append((name, dict(kv.split("=", 1) for kv in rest.split(",") if kv)))
    results: dict[str, Any] = {"threads": args.threads, "load_before": os.getloadavg(), "builds": {}}
    results["flops"] = gemm_gflops(args.threads)
    for build, where in builds.items():
        for config, extra in configs:
            name = build if len(configs) == 1 else config if len(builds) == 1 else f"{build}/{config}"
            results["builds"][name] = run_child(name, where, args, extra)
            results["builds"][name]["env"] = extra
    results["load_after"] = os.getloadavg()
    report(results)
    print(f"\nload average before/after: {results['load_before'][0]:.2f} / {results['load_after'][0]:.2f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
