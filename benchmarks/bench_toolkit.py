"""The toolkit's per-request costs on a store: a comparison table (`RAG.compare`, 6 papers), its CSV,
and a paper's page (`RAG.paper_page`, 5 neighbours), each over 10 different papers after one warm-up;
the BibTeX of every stored paper; and the map of the field (`RAG.field_map`): its first computation
for the store's revision with the resident memory it adds, then reading the kept map in a new
process's RAG and making the UI's chart (the Vega-Lite JSON gr.Plot sends), and drawing it as SVG
(10 runs each).

    RAG_STORE__PATH=<2,115-paper store> .venv/bin/python benchmarks/bench_toolkit.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag import RAG  # noqa: E402


def _ms(fn, runs: list) -> list[float]:  # type: ignore[type-arg]
    out = []
    for arg in runs:
        t0 = time.perf_counter()
        fn(arg)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _rss_mib() -> float:
    """This process's resident memory now (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    rag = RAG()
    ids = [p.paper_id for p in rag.retriever.papers().records]
    rag.compare(ids[:2])
    rag.paper_page(ids[0])  # warm: models, table, catalog
    groups = [ids[i : i + 6] for i in range(0, 60, 6)]
    figures = {
        "compare, 6 papers": _ms(rag.compare, groups),
        "compare + CSV, 6 papers": _ms(lambda g: rag.compare(g).comparison_table("csv"), groups),
        "paper page, 5 neighbours": _ms(rag.paper_page, [ids[i * 37 % len(ids)] for i in range(10)]),
    }
    t0 = time.perf_counter()
    for i in range(0, len(ids), 1000):  # an export request holds at most 1,000 ids
        rag.export(ids[i : i + 1000], "bibtex")
    export_ms = (time.perf_counter() - t0) * 1000
    rag.store.field_map_path.unlink(missing_ok=True)  # the first computation for this revision
    rss_before = _rss_mib()
    t0 = time.perf_counter()
    fmap = rag.field_map()
    first = time.perf_counter() - t0
    rss_after = _rss_mib()
    picked = ids[:10]

    def from_kept(_: object) -> None:
        fresh = RAG(rag.settings)  # as a new server process: the kept map, read from disk
        kept = fresh.field_map()
        assert kept.cached
        kept.chart(picked, link=lambda pid: f"/?paper={pid}").to_json()  # what gr.Plot sends the browser

    figures["map: kept map read by a new RAG + the UI's chart"] = _ms(from_kept, range(10))
    figures["map: drawn as SVG (vl-convert)"] = _ms(lambda _: fmap.render("svg", picked), range(10))
    rss_drawn = _rss_mib()
    print(f"{len(ids)} papers in the store")
    print(f"BibTeX of all {len(ids)} papers: {export_ms:.0f} ms")
    print(f"map of the field, first computation: {first:.1f} s ({fmap.seconds:.1f} s of layout, clusters, "
          f"labels; {len(fmap.clusters)} clusters); RSS {rss_before:.0f} -> {rss_after:.0f} MiB "
          f"(+{rss_after - rss_before:.0f}); after drawing it (altair, vl-convert) {rss_drawn:.0f} MiB")
    for name, ms in figures.items():
        print(f"{name}: median {statistics.median(ms):.1f} ms, max {max(ms):.1f} ms (10 runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
