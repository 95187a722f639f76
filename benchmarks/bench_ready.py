"""Where a fresh process's time to ready goes: wall and CPU seconds per step (imports, store client,
embedding model, first and second hybrid retrieval) against a store on a `chroma run` server, e.g. the
100,000-paper one of `bench_scale.py` (docs/scaling.md):

    .venv/bin/python benchmarks/bench_ready.py --url http://127.0.0.1:18765 --workdir /tmp/scale100k
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", required=True, help="the Chroma server's URL")
    ap.add_argument("--workdir", type=Path, required=True, help="bench_scale's workdir (its local/ paper table)")
    args = ap.parse_args(argv)
    out: dict[str, tuple[float, float]] = {}
    mark = [time.perf_counter(), time.process_time()]

    def step(name: str) -> None:
        t, c = time.perf_counter(), time.process_time()
        out[name] = (round(t - mark[0], 2), round(c - mark[1], 2))
        mark[:] = [t, c]

    import rag.answer.engine  # noqa: F401 - the pipeline's modules on llama-index
    import rag.retrieval.retrieve  # noqa: F401
    from rag import RAG, Settings

    step("imports: rag, llama-index")
    import chromadb  # noqa: F401
    import torch  # noqa: F401

    step("imports: chromadb, torch")
    local = str(args.workdir / "local")
    rag = RAG(Settings(store={"chroma_url": args.url, "path": local, "auto_seed": False,
                              "paper_table_dir": local + "/tables"}))
    rag.store  # noqa: B018
    step("store client")
    rag.embed_model  # noqa: B018
    step("embedding model")
    rag.retrieve("Which papers study diffusion models for protein design?", retriever="hybrid")
    step("first hybrid retrieval (paper table, catalog, BM25, query)")
    rag.retrieve("Which papers study graph neural networks for molecules?", retriever="hybrid")
    step("second hybrid retrieval")
    width = max(map(len, out))
    print(f"{'step':{width}s}  wall s  CPU s")
    for name, (wall, cpu) in out.items():
        print(f"{name:{width}s}  {wall:6.2f}  {cpu:5.2f}")
    print(f"{'ready (sum)':{width}s}  {sum(w for w, _ in out.values()) - out['second hybrid retrieval'][0]:6.2f}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
