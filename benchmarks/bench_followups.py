"""Follow-ups on the server: answers about shown papers (no retrieval) against new searches.

Starts `rag serve`'s app on 127.0.0.1 over a store, opens each of the first `--conversations`
written conversations (evals/data/conversations.jsonl) with its seed question, then sends every
follow-up with the conversation's history through POST /api/ask, `--repeat` times each (the answer
cache is off, so every request is computed). Prints, per kind of follow-up, the median and p95 of
the request's wall time as the client sees it (HTTP included) and of the server's own answer time
(`Answer.timings.total_ms`), beside the same figures for the conversations' new questions and seed
questions (retrieval and evidence).

    RAG_STORE__PATH=/tmp/store2115 .venv/bin/python benchmarks/bench_followups.py --conversations 20
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import httpx  # noqa: E402

from evals.conversations import load_conversations, load_seeds  # noqa: E402
from rag import RAG, Settings  # noqa: E402
from rag.cli import setup_logging  # noqa: E402
from rag.serve import ServerSettings, running  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conversations", type=int, default=20, help="how many written conversations (default 20)")
    ap.add_argument("--repeat", type=int, default=3, help="times each follow-up is sent (default 3)")
    args = ap.parse_args(argv)
    setup_logging("WARNING")

    settings = Settings()
    rag = RAG(settings.model_copy(update={"answer": settings.answer.model_copy(update={"cache_size": 0})}))
    seeds = load_seeds()
    conversations = load_conversations(seeds=seeds)[: args.conversations]
    wall: dict[str, list[float]] = defaultdict(list)
    server: dict[str, list[float]] = defaultdict(list)
    with running(rag, ServerSettings(port=0, ui=False)) as srv, httpx.Client(base_url=srv.url, timeout=600) as http:
        http.post("/api/ask", json={"question": conversations[0].seed_question})  # warm: models and caches
        for conv in conversations:
            history: list[dict] = []
            for i, q in enumerate([conv.seed_question] + [t.ask for t in conv.turns]):
                for _ in range(args.repeat if i else 1):
                    t0 = time.perf_counter()
                    body = http.post("/api/ask", json={"question": q, "history": history}).json()
                    took = (time.perf_counter() - t0) * 1000
                    kind = "seed question" if i == 0 else (body.get("followup") or {}).get("kind", "new question")
                    wall[kind].append(took)
                    server[kind].append(body["timings"]["total_ms"])
                history += [{"role": "user", "content": q},
                            {"role": "assistant", "content": body["text"], "citations": body["citations"]}]
    print(f"{len(conversations)} conversations, each follow-up sent {args.repeat} times (answer cache off)")
    print(f"{'kind':<16}{'n':>5}{'wall p50 ms':>14}{'wall p95 ms':>14}{'server p50':>13}{'server p95':>13}")
    local = ("metadata", "detail", "narrow", "compare", "missing")
    for kind in [*local, "similar", "show_all", "new question", "seed question"]:
        if wall.get(kind):
            w, s = wall[kind], server[kind]
            print(f"{kind:<16}{len(w):>5}{statistics.median(w):>14.1f}{pct(w, 0.95):>14.1f}"
                  f"{statistics.median(s):>13.1f}{pct(s, 0.95):>13.1f}")
    no_retrieval = [x for k in local for x in wall.get(k, [])]
    print(f"follow-ups that need no retrieval: wall p95 {pct(no_retrieval, 0.95):.1f} ms (target <= 100 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
