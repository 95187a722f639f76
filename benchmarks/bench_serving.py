"""Serving benchmark (issue 11): many users on one `rag serve`, the answer cache, memory over time.

For each configuration it starts `rag serve` (UI on, as users run it) on one store and measures:
  burst    N concurrent /api/ask requests with distinct questions: answered / rejected, p50/p95
           latency, time spent in line (Answer.timings.queue_ms);
  memory   distinct questions in rounds of N concurrent up to --memory-requests: RSS after request
           N and after the last (growth in %);
  repeats  40 concurrent requests over 10 distinct questions, then the 10 again one at a time:
           which were served from the cache and how fast (server time and client latency).

    .venv/bin/python benchmarks/bench_serving.py --store /tmp/full/chroma        # a store with the corpus
    .venv/bin/python benchmarks/bench_serving.py --ingest ../shared/data/iclr2025/papers.jsonl
    .venv/bin/python benchmarks/bench_serving.py --config default --config nocache=RAG_ANSWER__CACHE_SIZE=0

Questions: the development eval sets (../shared/evalsets: 200 distinct queries) phrased as questions.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

logger = logging.getLogger("bench_serving")
ROOT = Path(__file__).resolve().parent.parent
EVALSETS = ROOT.parent / "shared" / "evalsets"


def rss_mb(pid: int) -> float | None:
    """Resident memory of a process in MiB (Linux /proc)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_healthy(url: str, proc: subprocess.Popen[str] | None, timeout: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"server exited: {proc.stderr.read() if proc.stderr else ''}")
        try:
            return httpx.get(f"{url}/healthz", timeout=5).json()
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise SystemExit("server did not become healthy") from None
            time.sleep(1)


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def questions() -> list[str]:
    """200 distinct questions from the development eval sets."""
    out = []
    for line in (EVALSETS / "descriptions_dev.jsonl").read_text().splitlines():
        out.append(f"Which paper {json.loads(line)['query']}?")
    for line in (EVALSETS / "topics_dev.jsonl").read_text().splitlines():
        out.append(f"Which papers are about {json.loads(line)['query']}?")
    return list(dict.fromkeys(out))


def start_server(store: Path, port: int, env_extra: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "RAG_STORE__PATH": str(store),
        "RAG_STORE__AUTO_SEED": "false",
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "RAG_LOG_LEVEL": "WARNING",
        **env_extra,
    }
    cmd = [sys.executable, "-m", "rag.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    return subprocess.Popen(cmd, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)


def ask(url: str, question: str, timeout: float, http: httpx.Client | None = None) -> dict[str, Any]:
    t0 = time.perf_counter()
    row: dict[str, Any] = {"question": question}
    try:
        post = http.post if http is not None else httpx.post
        resp = post(f"{url}/api/ask", json={"question": question}, timeout=timeout)
        row["status"] = resp.status_code
        body = resp.json()
        if resp.status_code == 200:
            row["cache"] = body["timings"]["cache"]
            row["server_ms"] = body["timings"]["total_ms"]
            row["queue_ms"] = body["timings"]["queue_ms"]
            row["citations"] = [c["paper_id"] for c in body["citations"]]
        else:
            row["error"] = body.get("error", {}).get("type")
    except (httpx.HTTPError, ValueError) as exc:
        row["status"] = None
        row["error"] = type(exc).__name__
    row["seconds"] = time.perf_counter() - t0
    return row


def concurrent(url: str, qs: list[str], timeout: float) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [{} for _ in qs]
    start = threading.Event()

    def run(i: int) -> None:
        start.wait()
        rows[i] = ask(url, qs[i], timeout)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(qs))]
    for t in threads:
        t.start()
    start.set()
    for t in threads:
        t.join()
    return rows


def r2(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if r.get("status") == 200]
    secs = [r["seconds"] for r in ok]
    return {
        "requests": len(rows),
        "answered": len(ok),
        "rejected_429": sum(r.get("status") == 429 for r in rows),
        "failed_other": sum(r.get("status") not in (200, 429) for r in rows),
        "p50_s": r2(pct(secs, 50)),
        "p95_s": r2(pct(secs, 95)),
        "max_s": r2(max(secs) if secs else None),
        "queue_p95_s": r2((pct([r["queue_ms"] for r in ok], 95) or 0) / 1000),
    }


def run_config(name: str, env_extra: dict[str, str], store: Path, args: argparse.Namespace) -> dict[str, Any]:
    pool = questions()
    port = free_port()
    log = Path(tempfile.gettempdir()) / f"bench-serving-{name}.log"
    proc = start_server(store, port, env_extra, log)
    url = f"http://127.0.0.1:{port}"
    out: dict[str, Any] = {"config": name, "env": env_extra}
    try:
        t0 = time.perf_counter()
        health = wait_healthy(url, proc)
        out["ready_s"] = r2(time.perf_counter() - t0)
        out["papers"] = health["papers"]
        out["rss_idle_mb"] = r2(rss_mb(proc.pid))
        n = args.concurrency
        logger.info("[%s] burst of %d concurrent distinct questions", name, n)
        burst = concurrent(url, pool[:n], args.timeout)
        out["burst"] = summary(burst)
        out["rss_after_mb"] = {str(n): r2(rss_mb(proc.pid))}
        done = n
        while done < args.memory_requests:
            batch = pool[done % len(pool): done % len(pool) + n] or pool[:n]
            rows = concurrent(url, batch, args.timeout)
            done += len(batch)
            out["rss_after_mb"][str(done)] = r2(rss_mb(proc.pid))
            logger.info("[%s] %d requests, RSS %.0f MB (%s)", name, done, rss_mb(proc.pid) or 0, summary(rows))
        rss = out["rss_after_mb"]
        first, last = rss[str(n)], rss[str(done)]
        out["rss_growth_pct"] = r2(100 * (last - first) / first) if first and last else None
        # Repeats: 10 questions not asked yet (or asked long ago), 4 times each, all at once.
        rng = random.Random(0)
        ten = [f"{q} (repeat set)" for q in pool[:10]]
        forty = ten * 4
        rng.shuffle(forty)
        logger.info("[%s] 40 concurrent requests over 10 distinct questions", name)
        rows = concurrent(url, forty, args.timeout)
        hits = [r for r in rows if r.get("cache") == "hit"]
        out["repeats_concurrent"] = summary(rows) | {
            "cache_hits": len(hits),
            "hit_server_ms_p50": r2(pct([r["server_ms"] for r in hits], 50)),
            "hit_server_ms_max": r2(max((r["server_ms"] for r in hits), default=None)),
            "same_citations": all(
                r["citations"] == next(x["citations"] for x in rows if x["question"] == r["question"]
                                       and x.get("cache") == "miss")
                for r in hits
                if any(x["question"] == r["question"] and x.get("cache") == "miss" for x in rows)
            ),
        }
        with httpx.Client() as http:  # one client, as an API user keeps its connection
            seq = [ask(url, q, args.timeout, http) for q in ten]
        out["repeats_sequential"] = {
            "cache_hits": sum(r.get("cache") == "hit" for r in seq),
            "client_ms_p50": r2(statistics.median(r["seconds"] * 1000 for r in seq)),
            "client_ms_max": r2(max(r["seconds"] * 1000 for r in seq)),
            "server_ms_max": r2(max(r.get("server_ms", 0) for r in seq)),
        }
        out["healthz_queue"] = httpx.get(f"{url}/healthz").json()["queue"]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    return out


def ingest(corpus: Path, store: Path) -> float:
    env = {**os.environ, "RAG_STORE__PATH": str(store), "RAG_STORE__AUTO_SEED": "false",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rag.cli", "ingest", str(corpus)], env=env, check=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, help="embedded store directory holding the corpus")
    ap.add_argument("--ingest", type=Path, help="corpus file to ingest into --store (or a temp store) first")
    ap.add_argument(
        "--config", action="append", default=[],
        help="NAME or NAME=VAR=VALUE[,VAR=VALUE]: a configuration to compare (default: 'default')",
    )
    ap.add_argument("-c", "--concurrency", type=int, default=20, help="concurrent users (default 20)")
    ap.add_argument("--memory-requests", type=int, default=200, help="requests of the memory phase (default 200)")
    ap.add_argument("--timeout", type=float, default=900, help="client timeout per request, seconds")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)

    tmp = None
    store = args.store
    if store is None:
        tmp = tempfile.TemporaryDirectory(prefix="rag-serving-")
        store = Path(tmp.name) / "chroma"
    report: dict[str, Any] = {}
    if args.ingest:
        report["ingest_s"] = r2(ingest(args.ingest, store))
    configs = []
    for spec in args.config or ["default"]:
        name, _, rest = spec.partition("=")
        env = dict(kv.split("=", 1) for kv in rest.split(",") if kv) if rest else {}
        configs.append((name, env))
    report["configs"] = [run_config(name, env, store, args) for name, env in configs]
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
