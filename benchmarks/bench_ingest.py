"""Ingest configurations side by side, each into a new store in its own process: wall and CPU time,
word pieces embedded, achieved GFLOP/s against the same cores' measured fp32 GEMM rate, peak RSS.

Configurations (RAG_INGEST__* settings):
  embedded          windows embedded whole, no sentence vectors (the product before sentence vectors)
  embedded+sent     windows embedded whole, each sentence's vector pooled from the same pass
  late              each paper read in as few passes as fit, windows and sentences pooled from
                    them (the default)
  before            embedded+sent in batches of 64 texts whatever their length (stop 32's
                    default; with --cpu native-bf16 on a CPU with native bf16)

`--cpu native` runs in the precision `auto` picks here (int8 dense layers on any AVX2 CPU),
`native-bf16` in bfloat16 autocast (the choice before where bf16 is native); `--cpu avx2` as on a
CPU without AVX-512 or native bf16 (ATEN_CPU_CAPABILITY=avx2, ONEDNN_MAX_CPU_ISA=AVX2,
FBGEMM_ENABLE_INSTRUCTIONS=AVX2; int8), `avx2-fp32` the same in float32. Example (all 2,115 papers):

    .venv/bin/python benchmarks/bench_ingest.py --configs late,embedded+sent --cpu native,native-bf16,avx2
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CONFIGS = {
    "embedded": {"RAG_INGEST__WINDOW_VECTORS": "embedded", "RAG_INGEST__SENTENCE_VECTORS": "false"},
    "embedded+sent": {"RAG_INGEST__WINDOW_VECTORS": "embedded", "RAG_INGEST__SENTENCE_VECTORS": "true"},
    "late": {"RAG_INGEST__WINDOW_VECTORS": "late", "RAG_INGEST__SENTENCE_VECTORS": "true"},
    # stop 32's default: embedded+sent in batches of 64 texts whatever their length
    "before": {"RAG_INGEST__WINDOW_VECTORS": "embedded", "RAG_INGEST__SENTENCE_VECTORS": "true",
               "RAG_EMBEDDING__BATCH_TOKENS": "65536"},
}
# The precision is named explicitly, so each row says what it measured (under the AVX2 caps oneDNN
# reports no native bf16, and `auto` picks int8).
AVX2 = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "FBGEMM_ENABLE_INSTRUCTIONS": "AVX2"}
CPUS = {
    "native": {},
    "native-bf16": {"RAG_EMBEDDING__PRECISION": "bfloat16"},
    "avx2": {**AVX2, "RAG_EMBEDDING__PRECISION": "int8"},
    "avx2-fp32": {**AVX2, "RAG_EMBEDDING__PRECISION": "float32"},
}
FLOP_PER_PIECE = 2 * 6 * (4 * 384 * 384 + 2 * 384 * 1536)  # MiniLM-L6's dense layers, per word piece


def _worker(corpus: Path, papers: int, store: Path) -> dict[str, float]:
    """Runs inside the configured process: ingest, and count the word pieces the encoder read."""
    sys.path.insert(0, str(REPO))
    import torch

    from rag import RAG, Settings
    from rag.models.embeddings import bf16_supported

    subset = store.parent / "corpus.jsonl"
    lines = [line for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()][:papers]
    subset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rag = RAG(Settings(store={"path": store, "auto_seed": False}))
    cpu0, t0 = time.process_time(), time.perf_counter()
    report = rag.ingest([subset], progress=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    # word pieces the encoder read (counted after the timing): every chunk text, or for late
    # vectors every title alone and every pass
    from rag.ingest.build import Chunker, late_passes
    from rag.ingest.corpus import load_papers

    chunker = Chunker.for_model(rag.embed_model, rag.settings.ingest)
    tokenizer = rag.embed_model.tokenizer
    texts: list[str] = []
    stored = load_papers(subset).papers
    if chunker.vectors == "late":
        texts = [p.title for p in stored] + late_passes(stored, tokenizer, rag.embed_model.max_length)[1]
    else:
        texts = [c.embed_text for paper in stored for c in chunker.chunks(paper)]
    pieces = sum(sum(e.attention_mask) for e in tokenizer.encode_batch(texts))
    # the fp32 GEMM rate of these cores at the encoder's shapes (tokens x 384 @ 384 x 1536)
    a, b = torch.randn(4096, 384), torch.randn(384, 1536)
    for _ in range(3):
        a @ b
    n, g0 = 30, time.perf_counter()
    for _ in range(n):
        a @ b
    gemm = n * 2 * 4096 * 384 * 1536 / (time.perf_counter() - g0) / 1e9
    return {
        "papers": report.added, "chunks": report.chunks_written, "seconds": wall, "cpu_seconds": cpu,
        "word_pieces": pieces, "gflops": pieces * FLOP_PER_PIECE / wall / 1e9, "gemm_gflops": gemm,
        "bf16": float(bf16_supported()), "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=SHARED / "data/iclr2025/papers.jsonl")
    ap.add_argument("--papers", type=int, default=100_000, help="first N papers of the corpus (default: all)")
    ap.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated, of {', '.join(CONFIGS)}")
    ap.add_argument("--cpu", default="native", help=f"comma-separated, of {', '.join(CPUS)} (avx2: emulated on a larger CPU)")
    ap.add_argument("--out", type=Path, default=REPO / "reports/bench_ingest.json")
    ap.add_argument("--worker", nargs=2, metavar=("PAPERS", "STORE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(_worker(args.corpus, int(args.worker[0]), Path(args.worker[1]))))
        return 0
    rows = []
    for cpu in args.cpu.split(","):
        for name in args.configs.split(","):
            with tempfile.TemporaryDirectory() as tmp:
                env = {**os.environ, **CPUS[cpu], **CONFIGS[name], "RAG_LOG_LEVEL": "WARNING"}
                cmd = [sys.executable, __file__, "--corpus", str(args.corpus), "--worker", str(args.papers),
                       str(Path(tmp) / "store")]
                print(f"[{cpu}] {name} ...", file=sys.stderr, flush=True)
                out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
                row = {"cpu": cpu, "config": name, **json.loads(out.stdout.strip().splitlines()[-1])}
                rows.append(row)
                print(f"[{cpu}] {name}: {row['seconds']:.1f} s", file=sys.stderr, flush=True)
    print(f"{'cpu':9} {'config':14} {'papers':>6} {'chunks':>6} {'wall s':>7} {'cpu s':>7} {'pieces':>9} "
          f"{'GFLOP/s':>8} {'GEMM':>6} {'ratio':>6} {'bf16':>4} {'RSS MB':>7}")
    for r in rows:
        print(f"{r['cpu']:9} {r['config']:14} {r['papers']:6d} {r['chunks']:6d} {r['seconds']:7.1f} "
              f"{r['cpu_seconds']:7.1f} {r['word_pieces']:9d} {r['gflops']:8.1f} {r['gemm_gflops']:6.1f} "
              f"{r['gflops'] / r['gemm_gflops']:6.2f} {int(r['bf16']):4d} {r['peak_rss_mb']:7.0f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
