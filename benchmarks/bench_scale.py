"""Scale benchmark: a synthetic corpus on a `chroma run` server; ingest rate, retrieval latency, a second
process's time to ready, RSS; optionally two `rag serve` processes on that one server.

    nice -n 5 .venv/bin/python benchmarks/bench_scale.py --papers 100000 --vectors copy \
        --from-store /tmp/bench-retrieval-store [--serve] [--out reports/bench_scale.json]

Steps (each timed):
1. benchmarks/synth_corpus.py makes N papers (the 2,115 real ones first) in memory.
2. `chroma run` starts on 127.0.0.1 (fresh directory); the project writes into it as
   RAG_STORE__CHROMA_URL does (`Settings(store={"chroma_url": ...})`):
   a. the 2,115 real papers: copied with their vectors from `--from-store` (an embedded store of the
      full corpus), or embedded;
   b. `--probe-papers` synthetic papers through `rag.ingest` (the embedding model): the rate at 2,115;
   c. the rest: `--vectors embed` through the model, or `--vectors copy` through the same ingest code
      (chunking, batches, store writes, paper table) with vectors derived from the base paper's real
      vectors plus noise instead of the model: a LOAD test of the store and the paper table at sizes
      this machine's embedding throughput cannot reach in a session; its rate is no embedding rate
      and is reported per `--step` papers, to show whether writes slow down as the store grows;
   d. `--probe-papers` more through `rag.ingest`: the rate at N, and its ratio to (b).
3. A second process (a fresh interpreter) opens the same server: time until its first hybrid answer
   (embedding model load, paper table, catalog, BM25 index), then retrieval latency p50/p95 for
   dense, bm25 and hybrid over the dev questions (retrieval only, no LLM), quality on the dev sets
   (their gold papers are the real ones, among N), and its RSS. A third process's time to ready
   shows the cached catalog. The chroma server's RSS is read from /proc.
4. `--serve`: two `rag serve` processes (evidence answers, no LLM) on that server answer /api/ask.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

SHARED = REPO.parent / "shared"
REAL_PAPERS = 2115
QUESTION_SETS = {"topics_dev": SHARED / "evalsets/topics_dev.jsonl",
                 "descriptions_dev": SHARED / "evalsets/descriptions_dev.jsonl"}


def rss_mb(pid: int | str = "self") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return round(s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))], 1)


class CopyEmbedding:
    """Vectors for synthetic papers without the model: the base paper's mean vector plus noise, keyed
    by the title that starts every embedded text (rag.text.chunking)."""

    def __init__(self, by_title: dict[str, Any], noise: float = 0.35):
        self.by_title = by_title
        self.noise = noise

    def get_text_embedding_batch(self, texts: list[str], **_: Any) -> list[list[float]]:
        import numpy as np

        out = []
        for text in texts:
            base = self.by_title[text.split("\n", 1)[0]]
            rng = np.random.default_rng(abs(hash(text)) % (1 << 32))
            v = base + self.noise * rng.standard_normal(base.shape).astype(np.float32) / np.sqrt(base.shape[0])
            out.append((v / np.linalg.norm(v)).tolist())
        return out


def write_jsonl(path: Path, records: list[dict]) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def copy_store(src_path: Path, dst: Any, batch_papers: int = 128) -> int:
    """Every chunk of an embedded store (vectors included) written to `dst` a batch of whole papers at
    a time, through PaperStore.write (so the paper table follows); returns the papers copied."""
    from collections import defaultdict

    from rag import Settings
    from rag.store.chroma import PaperStore

    src = PaperStore(Settings(store={"path": src_path, "auto_seed": False}).store)
    record = src.model_record()
    if record is not None:
        dst.set_model_record(record)
    by_paper: dict[str, list[tuple[str, Any, dict, str]]] = defaultdict(list)
    offset = 0
    while True:
        page = src.collection.get(include=["metadatas", "documents", "embeddings"], limit=2000, offset=offset)
        if not page["ids"]:
            break
        for cid, vec, meta, doc in zip(page["ids"], page["embeddings"], page["metadatas"], page["documents"]):
            by_paper[str(meta["paper_id"])].append((cid, [float(x) for x in vec], meta, doc or ""))
        offset += len(page["ids"])
    pids = list(by_paper)
    for i in range(0, len(pids), batch_papers):
        rows = [c for p in pids[i : i + batch_papers] for c in by_paper[p]]
        dst.write([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows])
    return len(pids)


def timed_ingest(rag: Any, path: Path, label: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    rep = rag.ingest([path], progress=False)
    s = time.perf_counter() - t0
    out = {"papers": rep.added, "chunks": rep.chunks_written, "seconds": round(s, 1),
           "papers_per_s": round(rep.added / s, 2), "store_papers_after": rag.stats()["papers"],
           "load_avg": os.getloadavg()[0]}
    print(f"{label}: {out}", flush=True)
    return out


def ingest(args: argparse.Namespace, url: str, work: Path, records: list[dict]) -> dict[str, Any]:
    """Fill the server: the real papers (copied from --from-store, or embedded), a real-embedding
    ingest of --probe-papers at the small size, the rest (embed or copy vectors), and a second
    real-embedding ingest of --probe-papers at the full size."""
    import numpy as np

    from rag import RAG, Settings
    from rag.ingest.build import IngestReport, ingest_papers
    from rag.ingest.corpus import load_many

    settings = Settings(store={"chroma_url": url, "path": work / "local", "auto_seed": False,
                               "paper_table_dir": work / "local" / "tables"})
    rag = RAG(settings)
    out: dict[str, Any] = {}
    real = records[:REAL_PAPERS]
    probe_n = args.probe_papers
    small_probe, rest, large_probe = records[REAL_PAPERS : REAL_PAPERS + probe_n], \
        records[REAL_PAPERS + probe_n : len(records) - probe_n], records[len(records) - probe_n :]
    t0 = time.perf_counter()
    if args.from_store:
        n = copy_store(args.from_store, rag.store)
        out["real"] = {"papers": n, "seconds": round(time.perf_counter() - t0, 1), "how": f"copied from {args.from_store}"}
        print(f"real papers: {out['real']}", flush=True)
    else:
        out["real"] = timed_ingest(rag, write_jsonl(work / "real.jsonl", real), "real papers (embedded)")
    rag.embed_model  # noqa: B018 - loaded before the timed ingests (not part of their rate)
    if small_probe:
        out["embed_at_small"] = timed_ingest(rag, write_jsonl(work / "probe1.jsonl", small_probe),
                                             f"embedding ingest at {REAL_PAPERS} papers")
    if rest:
        path = write_jsonl(work / "rest.jsonl", rest)
        t0 = time.perf_counter()
        if args.vectors == "embed":
            rep = rag.ingest([path], progress=True)
        else:
            store = rag.store
            ids = [r["id"] for r in real]
            means = store.paper_vectors(ids)
            by_title = {r["title"]: np.asarray(means[ids[n % len(ids)]], dtype=np.float32)
                        for n, r in enumerate(records) if n >= REAL_PAPERS}
            papers = load_many([path]).papers
            added = chunks = 0
            steps = []
            for i in range(0, len(papers), args.step):
                t1 = time.perf_counter()
                part = ingest_papers(store, CopyEmbedding(by_title), papers[i : i + args.step], settings.ingest,  # type: ignore[arg-type]
                                     progress=False)
                added, chunks = added + part.added, chunks + part.chunks_written
                steps.append({"store_papers_after": REAL_PAPERS + probe_n + added,
                              "papers_per_s": round(part.added / (time.perf_counter() - t1), 1),
                              "load_avg": os.getloadavg()[0]})
                print(f"  copy-vector ingest: {steps[-1]}", flush=True)
            rep = IngestReport(added=added, chunks_written=chunks)
            out["rest_steps"] = steps
        s = time.perf_counter() - t0
        out["rest"] = {"papers": rep.added, "chunks": rep.chunks_written, "seconds": round(s, 1),
                       "papers_per_s": round(rep.added / s, 2), "vectors": args.vectors}
        print(f"rest: {out['rest']}", flush=True)
    if large_probe:
        out["embed_at_large"] = timed_ingest(rag, write_jsonl(work / "probe2.jsonl", large_probe),
                                             f"embedding ingest at {len(records) - probe_n} papers")
        if small_probe:
            out["embed_rate_ratio_large_to_small"] = round(
                out["embed_at_large"]["papers_per_s"] / out["embed_at_small"]["papers_per_s"], 3)
    out["ingest_process_rss_mb"] = rss_mb()
    out["stats"] = rag.stats()
    return out


PROBE = r"""
import json, os, sys, time, resource
t0 = time.perf_counter()
sys.path.insert(0, {repo!r})
from rag import RAG, Settings
settings = Settings(store={{"chroma_url": {url!r}, "path": {local!r}, "auto_seed": False,
                           "paper_table_dir": {local!r} + "/tables"}})
rag = RAG(settings)
r = rag.retrieve("Which papers study diffusion models for protein design?", retriever="hybrid")
ready = time.perf_counter() - t0
out = {{"ready_s": round(ready, 2), "rss_ready_mb": None}}
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
out["rss_ready_mb"] = rss()
questions = json.loads({questions!r})
from evals.metrics import ndcg_at_k, reciprocal_rank
embed = rag.embed_model
real_embed = embed.get_query_embedding
vectors = {{}}
def remembered(text):  # the second pass: query vectors computed once (the model's cost does not grow with N)
    if text not in vectors:
        vectors[text] = real_embed(text)
    return vectors[text]
for label in ("", "_no_embed"):
    if label:
        object.__setattr__(embed, "get_query_embedding", remembered)
        for q, _, _ in questions:
            rag.retrieve(q, top_k=10, retriever="hybrid")  # fills the vectors (incl. rewritten queries)
    for mode in ("dense", "bm25", "hybrid"):
        lat, nd, rr = [], [], []
        for q, gold, name in questions:
            t = time.perf_counter()
            res = rag.retrieve(q, top_k=10, retriever=mode)
            lat.append((time.perf_counter() - t) * 1000)
            ids = [s.paper_id for s in res.sources]
            (nd if name == "topics_dev" else rr).append(ndcg_at_k(ids, gold, 10) if name == "topics_dev" else reciprocal_rank(ids, gold))
        lat.sort()
        p = lambda q: round(lat[min(len(lat) - 1, round(q / 100 * (len(lat) - 1)))], 1)
        out[mode + label] = {{"p50_ms": p(50), "p95_ms": p(95), "topics_ndcg10": round(sum(nd) / max(len(nd), 1), 4),
                              "descriptions_mrr@10": round(sum(rr) / max(len(rr), 1), 4)}}
out["rss_end_mb"] = rss()
out["maxrss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
print("RESULT " + json.dumps(out), flush=True)
"""


def questions(limit: int | None) -> list[tuple[str, list[str], str]]:
    out = []
    for name, path in QUESTION_SETS.items():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                gold = item.get("gold_ids") or item.get("relevant_ids") or item.get("gold") or []
                out.append((item.get("query") or item.get("question"), list(gold), name))
    random.Random(0).shuffle(out)
    return out[:limit] if limit else out


def probe(url: str, work: Path, qs: list[tuple[str, list[str], str]], env: dict[str, str],
          local: str = "local") -> dict[str, Any]:
    """A fresh process on the server: `local` is its RAG_STORE__PATH ("local": the ingest process's,
    so the same paper table, as a second process on the same machine; another: a new machine)."""
    code = PROBE.format(repo=str(REPO), url=url, local=str(work / local), questions=json.dumps(qs))
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=3600)
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(f"probe failed ({done.returncode}):\n{done.stderr[-3000:]}")
    out = json.loads(line[7:])
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    return out


def serve_two(url: str, work: Path, env: dict[str, str]) -> dict[str, Any]:
    import httpx

    from tests.servers import rag_serve

    out: dict[str, Any] = {}
    serve_env = {"RAG_STORE__CHROMA_URL": url, "RAG_STORE__PATH": str(work / "local"),
                 "RAG_STORE__PAPER_TABLE_DIR": str(work / "local" / "tables"),
                 "RAG_STORE__AUTO_SEED": "false", "RAG_ANSWER__MODE": "evidence"}
    t0 = time.perf_counter()
    with rag_serve(work / "serve-a.log", serve_env, "--no-ui", timeout=900) as (a, pa):
        out["first_ready_s"] = round(time.perf_counter() - t0, 1)
        t1 = time.perf_counter()
        with rag_serve(work / "serve-b.log", serve_env, "--no-ui", timeout=900) as (b, pb):
            out["second_ready_s"] = round(time.perf_counter() - t1, 1)
            for name, base, proc in (("a", a, pa), ("b", b, pb)):
                t = time.perf_counter()
                r = httpx.post(f"{base}/api/ask", json={"question": "Which papers study model merging?"}, timeout=300)
                body = r.json()
                out[name] = {"status": r.status_code, "ms": round((time.perf_counter() - t) * 1000),
                             "sources": len(body.get("sources", [])), "rss_mb": rss_mb(proc.pid)}
    return out


TABLE_PROBE = r"""
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
sys.path.insert(0, {repo!r})
from pathlib import Path
from rag.retrieval.lexical import PaperIndex
from rag.store.papertable import PaperTable
from rag.settings import RetrievalSettings
out = {{}}
def step(name, fn):  # wall and CPU seconds (CPU: what the step costs on an idle core)
    t, c = time.perf_counter(), time.process_time()
    fn()
    out[name + "_s"] = round(time.perf_counter() - t, 2)
    out[name + "_cpu_s"] = round(time.process_time() - c, 2)
out["imports_s"], out["imports_cpu_s"] = round(time.perf_counter() - t0, 2), round(time.process_time() - c0, 2)
box = {{}}
def open_index():
    table = PaperTable(Path({path!r}))
    box["index"] = PaperIndex(table, table.stamp(), RetrievalSettings())
step("open", open_index)
index = box["index"]
step("catalog", lambda: index.catalog)
step("bm25_index", lambda: index.bm25("warm up", 10, None))
step("term_stats", index.term_stats)
out["ready_s"], out["ready_cpu_s"] = round(time.perf_counter() - t0, 2), round(time.process_time() - c0, 2)
lat, cpu = [], []
for q in json.loads({questions!r}):
    t, c = time.perf_counter(), time.process_time()
    index.bm25(q, 100, None)
    lat.append((time.perf_counter() - t) * 1000); cpu.append((time.process_time() - c) * 1000)
lat.sort(); cpu.sort()
out["bm25_p50_ms"] = round(lat[len(lat) // 2], 2); out["bm25_p95_ms"] = round(lat[int(0.95 * (len(lat) - 1))], 2)
out["bm25_cpu_p50_ms"] = round(cpu[len(cpu) // 2], 2); out["bm25_cpu_p95_ms"] = round(cpu[int(0.95 * (len(cpu) - 1))], 2)
for line in open("/proc/self/status"):
    if line.startswith("VmRSS:"):
        out["rss_mb"] = round(int(line.split()[1]) / 1024, 1)
print("RESULT " + json.dumps(out), flush=True)
"""


def table_only(args: argparse.Namespace, records: list[dict]) -> dict[str, Any]:
    """The paper table alone at N papers (no Chroma, no vectors): write rate through PaperTable.write
    (what every store write calls), then a fresh process's open, catalog, BM25 index and BM25 latency."""
    from rag.store.papertable import PaperTable, TableStamp

    path = args.workdir / "table.sqlite3"
    table = PaperTable(path)
    out: dict[str, Any] = {"steps": []}
    t0 = t1 = time.perf_counter()
    for i in range(0, len(records), 128):
        chunks = []
        for r in records[i : i + 128]:
            meta = {"paper_id": r["id"], "title": r["title"], "authors": "; ".join(r.get("authors") or []),
                    "decision": r["decision"], "url": r["source_url"], "content_hash": "h", "n_chunks": 2}
            chunks += [(f"{r['id']}#h#0", {**meta, "chunk_index": 0, "kind": "title"}, ""),
                       (f"{r['id']}#h#1", {**meta, "chunk_index": 1, "kind": "window"}, r["abstract"])]
        table.write(chunks, TableStamp("bench", str(i), 0))
        done = i + len(records[i : i + 128])
        if done % args.step < 128 or done == len(records):
            out["steps"].append({"papers": done, "papers_per_s": round((done - (out["steps"][-1]["papers"] if out["steps"]
                                 else 0)) / (time.perf_counter() - t1), 1), "load_avg": os.getloadavg()[0]})
            print(f"  table write: {out['steps'][-1]}", flush=True)
            t1 = time.perf_counter()
    out["write_s"] = round(time.perf_counter() - t0, 1)
    out["file_mb"] = round(path.stat().st_size / 1e6, 1)
    qs = [q for q, _, _ in questions(None)]
    code = TABLE_PROBE.format(repo=str(REPO), path=str(path), questions=json.dumps(qs))
    for name in ("first_process", "second_process"):  # the first builds and caches the catalog
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=3600)
        line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            raise RuntimeError(done.stderr[-3000:])
        out[name] = json.loads(line[7:])
        print(f"  {name}: {out[name]}", flush=True)
    return out


def probe_only(args: argparse.Namespace) -> int:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    qs = questions(args.questions or None)
    results: dict[str, Any] = {"probe_url": args.probe_url, "load_avg_start": os.getloadavg()}
    results["second_process"] = probe(args.probe_url, args.workdir, qs, env)
    print(json.dumps(results["second_process"], indent=2), flush=True)
    results["third_process"] = probe(args.probe_url, args.workdir, qs[:5], env)
    print(f"third process: {results['third_process']}", flush=True)
    if args.serve:
        results["serve"] = serve_two(args.probe_url, args.workdir, env)
        print(f"two rag serve: {results['serve']}", flush=True)
    results["load_avg_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    print(f"wrote {args.out}")
    return 0


def bm25_parity(args: argparse.Namespace) -> dict[str, Any]:
    """BM25 alone on the dev sets over the 2,115 real papers: the bm25s index rag used before
    (k1 1.2, b 0.5, title x3) against the paper table's (rag.retrieval.lexical.Bm25Index); quality and latency."""
    import tempfile

    import bm25s
    import Stemmer

    from evals.metrics import ndcg_at_k, recall_at_k, reciprocal_rank
    from rag.retrieval.lexical import PaperIndex
    from rag.settings import RetrievalSettings
    from rag.store.papertable import PaperTable, TableStamp

    papers = [json.loads(line) for line in (SHARED / "data/iclr2025/papers.jsonl").open(encoding="utf-8")]
    sets = {n: [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]
            for n, p in QUESTION_SETS.items()}
    stemmer = Stemmer.Stemmer("english")
    old = bm25s.BM25(k1=1.2, b=0.5)
    old.index(bm25s.tokenize([" ".join([p["title"]] * 3 + [p["abstract"]]) for p in papers], stopwords="en",
                             stemmer=stemmer, show_progress=False), show_progress=False)

    def before(text: str) -> list[str]:
        res, sc = old.retrieve(bm25s.tokenize(text, stemmer=stemmer, show_progress=False), k=100, show_progress=False)
        return [papers[i]["id"] for i, v in zip(res[0], sc[0]) if v > 0]

    table = PaperTable(Path(tempfile.mkdtemp()) / "parity.sqlite3")
    for p in papers:
        meta = {"paper_id": p["id"], "title": p["title"], "authors": "; ".join(p["authors"] or []),
                "decision": p["decision"], "url": "", "content_hash": "h", "n_chunks": 1, "chunk_index": 0,
                "kind": "window"}
        table.write([(p["id"] + "#h#0", meta, p["abstract"])], TableStamp("parity", "1", 0))
    index = PaperIndex(table, table.stamp(), RetrievalSettings())

    def after(text: str) -> list[str]:
        return [pid for pid, _ in index.bm25(text, 100, None)]

    out: dict[str, Any] = {}
    for name, fn in (("bm25s (before)", before), ("paper table (now)", after)):
        out[name] = {}
        for set_name, items in sets.items():
            lat, nd, rr, rc = [], [], [], []
            for it in items:
                t = time.perf_counter()
                ids = fn(it["query"])
                lat.append((time.perf_counter() - t) * 1000)
                nd.append(ndcg_at_k(ids, it["gold_ids"], 10))
                rr.append(reciprocal_rank(ids, it["gold_ids"]))
                rc.append(recall_at_k(ids, it["gold_ids"], 100))
            out[name][set_name] = {"ndcg@10": round(statistics.fmean(nd), 4), "mrr": round(statistics.fmean(rr), 4),
                                   "recall@100": round(statistics.fmean(rc), 4), "p50_ms": pct(lat, 50),
                                   "p95_ms": pct(lat, 95)}
        print(f"{name}: {out[name]}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--papers", type=int, default=10_000, help="papers in the synthetic corpus (>= 2,115)")
    ap.add_argument("--vectors", choices=["embed", "copy"], default="embed",
                    help="embed: every paper through the embedding model; copy: see the docstring")
    ap.add_argument("--from-store", type=Path, help="an embedded store of the 2,115 real papers to copy vectors from "
                    "(e.g. the one benchmarks/bench_retrieval.py --ingest made) instead of embedding them again")
    ap.add_argument("--probe-papers", type=int, default=200,
                    help="papers ingested with the embedding model at 2,115 papers and again at N (their rate ratio)")
    ap.add_argument("--step", type=int, default=10_000, help="copy-vector ingest: papers per timed step")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/bench-scale"))
    ap.add_argument("--questions", type=int, default=0, help="dev questions timed per mode (0: all 200)")
    ap.add_argument("--bm25-parity", action="store_true",
                    help="only compare BM25 quality and latency, bm25s (before) vs the paper table, on the dev sets")
    ap.add_argument("--table-only", action="store_true",
                    help="measure the paper table alone at N papers (no Chroma server, no vectors)")
    ap.add_argument("--probe-url", help="only the probes (and --serve) against this running Chroma server, "
                    "filled by an earlier run in --workdir")
    ap.add_argument("--serve", action="store_true", help="also run two `rag serve` processes on the server")
    ap.add_argument("--ingest-only", action="store_true",
                    help="stop after the ingest (the data stays in --workdir; restart `chroma run --path "
                    "WORKDIR/chroma-server --port PORT` on the port recorded in the results, then --probe-url)")
    ap.add_argument("--port", type=int, default=0, help="the Chroma server's port (0: a free one)")
    ap.add_argument("--seed", type=int, default=2025)
    ap.add_argument("--out", type=Path, default=REPO / "reports/bench_scale.json")
    args = ap.parse_args(argv)
    from synth_corpus import generate

    from rag.cli import setup_logging
    from tests.servers import chroma_server

    setup_logging("INFO")
    for noisy in ("httpx", "chromadb", "sentence_transformers", "rag.pipeline"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if args.probe_url:
        return probe_only(args)
    if args.bm25_parity:
        parity = bm25_parity(args)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(parity, indent=2))
        return 0
    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    results: dict[str, Any] = {"papers": args.papers, "vectors": args.vectors, "cpus": os.cpu_count(),
                               "load_avg_start": os.getloadavg()}
    t0 = time.perf_counter()
    records = generate(args.papers, args.seed)
    results["generate_s"] = round(time.perf_counter() - t0, 1)
    if args.table_only:
        results["table"] = table_only(args, records)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2))
        print(f"wrote {args.out}")
        return 0
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    with chroma_server(args.workdir, port=args.port or None) as url:
        results["url"] = url
        server_pid = int(subprocess.run(["pgrep", "-n", "-f", str(args.workdir / "chroma-server")],
                                        capture_output=True, text=True).stdout.split()[0])
        results["ingest"] = ingest(args, url, args.workdir, records)
        results["chroma_server_rss_mb"] = rss_mb(server_pid)
        if args.ingest_only:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(results, indent=2))
            print(json.dumps(results, indent=2))
            return 0
        qs = questions(args.questions or None)
        results["second_process"] = probe(url, args.workdir, qs, env)
        print(f"second process: ready in {results['second_process']['ready_s']} s", flush=True)
        for mode in ("dense", "bm25", "hybrid"):
            print(f"  {mode}: {results['second_process'][mode]}", flush=True)
        results["third_process_ready_s"] = probe(url, args.workdir, qs[:5], env)["ready_s"]
        results["new_machine"] = probe(url, args.workdir, qs[:5], env, local="local-other")  # table rebuilt once
        results["chroma_server_rss_after_mb"] = rss_mb(server_pid)
        if args.serve:
            results["serve"] = serve_two(url, args.workdir, env)
            print(f"two rag serve: {results['serve']}", flush=True)
        du = subprocess.run(["du", "-sm", str(args.workdir / "chroma-server"), str(args.workdir / "local")],
                            capture_output=True, text=True).stdout.split()
        results["disk_mb"] = {"chroma_server": int(du[0]), "paper_table": int(du[2]) if len(du) > 2 else None}
    results["load_avg_end"] = os.getloadavg()
    results["median_question_chars"] = statistics.median(len(q) for q, _, _ in qs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
