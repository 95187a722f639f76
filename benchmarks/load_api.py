"""Load test of `POST /api/ask`: N concurrent questions against `rag serve` with the local model.

Every request must be answered (200) or cleanly rejected (429 queue full, 503 busy/unavailable);
any other 5xx or a dropped connection fails the run. Reports p50/p95 latency and the server's RSS.

    .venv/bin/python benchmarks/load_api.py                  # starts `rag serve` on a free port
    .venv/bin/python benchmarks/load_api.py --url http://127.0.0.1:7860 --pid 1234
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

QUESTIONS = [
    "Which paper proposes a lifelong learning agent for formal theorem proving?",
    "Which benchmark evaluates retrieval-augmented multimodal models on visual knowledge?",
    "How can synthetic data help LLM post-training, in theory?",
    "How do deep neural networks break the curse of dimensionality?",
    "Which paper evaluates code generation in many programming languages?",
    "How do strong preferences affect the robustness of preference models?",
    "Which paper uses triples to structure table question answering?",
    "How can graph neural networks scale with message invariance?",
    "Which paper defends against label poisoning with adversarial training?",
    "How are spurious correlations mitigated in zero-shot multimodal models?",
]


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


def start_server(store: Path, port: int) -> subprocess.Popen[str]:
    """`rag serve` in a subprocess (API only) on a fresh store that auto-seeds the 19 papers."""
    env = {
        **os.environ,
        "RAG_STORE__PATH": str(store),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "RAG_LOG_LEVEL": "WARNING",
    }
    cmd = [sys.executable, "-m", "rag.cli", "serve", "--host", "127.0.0.1", "--port", str(port), "--no-ui"]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


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


def one_request(
    url: str, question: str, start: threading.Event, out: list[dict[str, Any]], timeout: float
) -> None:
    start.wait()
    t0 = time.perf_counter()
    row: dict[str, Any] = {"question": question}
    try:
        resp = httpx.post(f"{url}/api/ask", json={"question": question}, timeout=timeout)
        row["status"] = resp.status_code
        body = resp.json()
        if resp.status_code == 200:
            row["citations"] = len(body.get("citations", []))
            row["refused"] = body.get("refused")
        else:
            row["error"] = body.get("error", {}).get("type")
    except (httpx.HTTPError, ValueError) as exc:
        row["status"] = None
        row["error"] = type(exc).__name__
    row["seconds"] = time.perf_counter() - t0
    out.append(row)


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", help="an already running server (default: start `rag serve` here)")
    ap.add_argument("--pid", type=int, help="pid of the server given with --url, for its RSS")
    ap.add_argument("-n", "--requests", type=int, default=20, help="concurrent requests (default 20)")
    ap.add_argument("--timeout", type=float, default=900, help="client timeout per request in seconds")
    ap.add_argument("--rounds", type=int, default=1, help="bursts of N requests one after another")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = ap.parse_args(argv)

    proc = None
    tmp = None
    url = args.url
    pid = args.pid
    if url is None:
        tmp = tempfile.TemporaryDirectory(prefix="rag-load-")
        port = free_port()
        proc = start_server(Path(tmp.name) / "chroma", port)
        url, pid = f"http://127.0.0.1:{port}", proc.pid
    try:
        health = wait_healthy(url, proc)
        # One warm request so model loading is not counted as load.
        httpx.post(f"{url}/api/ask", json={"question": QUESTIONS[0]}, timeout=args.timeout)
        rss_before = rss_mb(pid) if pid else None
        rows: list[dict[str, Any]] = []
        rss_rounds: list[float | None] = []
        t0 = time.perf_counter()
        for _ in range(args.rounds):
            start = threading.Event()
            threads = [
                threading.Thread(
                    target=one_request, args=(url, QUESTIONS[i % len(QUESTIONS)], start, rows, args.timeout)
                )
                for i in range(args.requests)
            ]
            for t in threads:
                t.start()
            start.set()
            for t in threads:
                t.join()
            rss_rounds.append(_round(rss_mb(pid)) if pid else None)
        wall = time.perf_counter() - t0
        rss_after = rss_mb(pid) if pid else None
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
        if tmp is not None:
            tmp.cleanup()

    statuses = Counter(str(r["status"]) for r in rows)
    ok = [r["seconds"] for r in rows if r["status"] == 200]
    every = [r["seconds"] for r in rows]
    bad = [
        r
        for r in rows
        if r["status"] is None
        or (r["status"] >= 500 and r["status"] != 503)
        or r["status"] not in (200, 429, 503)
    ]
    report = {
        "url": url,
        "llm": health.get("llm"),
        "papers": health.get("papers"),
        "requests": args.requests * args.rounds,
        "statuses": dict(statuses),
        "errors": dict(Counter(r.get("error") for r in rows if r.get("error"))),
        "bad": len(bad),
        "wall_seconds": round(wall, 1),
        "answered_p50_s": _round(pct(ok, 50)),
        "answered_p95_s": _round(pct(ok, 95)),
        "all_p50_s": _round(pct(every, 50)),
        "all_p95_s": _round(pct(every, 95)),
        "rss_before_mb": _round(rss_before),
        "rss_after_mb": _round(rss_after),
        "rss_after_each_round_mb": rss_rounds,
    }
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps({**report, "rows": rows}, indent=2))
    return 1 if bad else 0


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


if __name__ == "__main__":
    sys.exit(main())
