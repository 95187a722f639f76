"""A synthetic corpus for scale tests: N distinct papers derived from the 2,115 real ones, deterministic.

    .venv/bin/python benchmarks/synth_corpus.py /tmp/synth-100k.jsonl [--papers 100000] [--seed 2025]

Same JSONL schema as ../shared/data/iclr2025/papers.jsonl ({id, title, abstract, authors, decision,
source_url}). The first 2,115 records are the real papers unchanged (so the dev evalsets still have
their gold papers in a synthetic store); every later record is derived from one real "base" paper:

- id: "syn-" + 12 hex digits of a hash of (seed, n); distinct, never an OpenReview id.
- title: the base title reworded (a prefix such as "Revisiting", or the base's short name joined to
  another paper's subtitle); a repeat gets " (variant n)", so titles are distinct (case-folded).
- abstract: the base's first sentence, then sentences of the base and of 2-4 other real abstracts,
  kept between 570 and 2,513 characters like the real ones.
- authors: 1-8 names drawn from the real author pool; decision drawn with the real proportions.
- source_url: https://example.invalid/synthetic/<id> (no real page).

The same (papers, seed) always writes the same file, byte for byte. Write it outside the repository
(the data must not be committed).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REAL = REPO.parent / "shared" / "data" / "iclr2025" / "papers.jsonl"
PREFIXES = (
    "Revisiting", "Rethinking", "Scaling", "Towards Robust", "Efficient", "On the Limits of",
    "A Closer Look at", "Understanding", "Provable", "Beyond", "Learning to Improve", "Sparse",
    "Adaptive", "Federated", "Self-Supervised", "Multimodal", "Causal", "Uncertainty-Aware",
)
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z$\\(])")
MIN_CHARS, MAX_CHARS = 570, 2513


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.split(text) if s.strip()]


def synth_id(seed: int, n: int) -> str:
    return "syn-" + hashlib.blake2b(f"{seed}:{n}".encode(), digest_size=6).hexdigest()


def _title(rng: random.Random, base: dict, other: dict) -> str:
    title = base["title"]
    head, _, sub = title.partition(":")
    if sub and ":" in other["title"] and rng.random() < 0.5:
        return f"{head.strip()}: {other['title'].partition(':')[2].strip()}"
    prefix = rng.choice(PREFIXES)
    return f"{prefix} {title[:1].lower() + title[1:] if not title[:2].isupper() else title}"


def _abstract(rng: random.Random, base: dict, pool: list[list[str]]) -> str:
    own = sentences(base["abstract"]) or [base["abstract"]]
    picked = [own[0]]
    donors = [own[1:]] + [pool[rng.randrange(len(pool))] for _ in range(rng.randint(2, 4))]
    candidates = [s for d in donors for s in rng.sample(d, min(len(d), rng.randint(1, 3)))]
    for s in candidates:
        if len(" ".join(picked + [s])) > MAX_CHARS:
            continue
        picked.append(s)
    while len(" ".join(picked)) < MIN_CHARS:
        picked.append(rng.choice(rng.choice(pool)))
        if len(" ".join(picked)) > MAX_CHARS:
            picked.pop()
            picked.append(own[0][: MIN_CHARS])
            break
    return " ".join(picked)


def generate(n_papers: int, seed: int = 2025, real_path: Path = REAL) -> list[dict]:
    """The corpus as records: the real papers first, then derived ones up to n_papers."""
    real = [json.loads(line) for line in real_path.open(encoding="utf-8") if line.strip()]
    out = [dict(r) for r in real[:n_papers]]
    seen = {r["title"].casefold() for r in out}
    pool = [sentences(r["abstract"]) or [r["abstract"]] for r in real]
    authors = sorted({a for r in real for a in r.get("authors") or []})
    decisions = [r["decision"] for r in real]
    for n in range(len(out), n_papers):
        rng = random.Random(f"{seed}:{n}")
        base = real[n % len(real)]
        title = _title(rng, base, real[rng.randrange(len(real))])
        if title.casefold() in seen:
            title = f"{title} (variant {n})"
        seen.add(title.casefold())
        pid = synth_id(seed, n)
        out.append({
            "id": pid,
            "title": title,
            "abstract": _abstract(rng, base, pool),
            "authors": rng.sample(authors, rng.randint(1, 8)),
            "decision": rng.choice(decisions),
            "source_url": f"https://example.invalid/synthetic/{pid}",
        })
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="JSONL file to write (outside the repository)")
    ap.add_argument("--papers", type=int, default=100_000, help="papers in the corpus (>= 1)")
    ap.add_argument("--seed", type=int, default=2025)
    ap.add_argument("--real", type=Path, default=REAL, help="the real corpus the papers derive from")
    args = ap.parse_args(argv)
    if args.papers < 1:
        ap.error("--papers must be >= 1")
    records = generate(args.papers, args.seed, args.real)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    ids, titles = {r["id"] for r in records}, {r["title"].casefold() for r in records}
    print(f"wrote {len(records)} papers ({len(ids)} ids, {len(titles)} titles) to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
