"""A map of the field: every stored paper placed in two dimensions from its stored vector, in clusters
labelled by their distinctive words; an answer's papers can be picked out on it.

The layout is t-SNE (scikit-learn) of the papers' vectors reduced to 50 dimensions by PCA; the clusters
are k-means of the same reduced vectors (about one per 90 papers, 2 to 24), each labelled by the three
words or word pairs its titles and abstracts use most more often than the other clusters do. It is
computed once per store revision (~20 s for 2,115 papers on 2 cores, with a progress bar) and kept as
JSON beside the store's paper table; later maps of the same revision are read from there in
milliseconds. Rendered as SVG (hover a point: its title; click it: its page), as a self-contained
HTML page, or as a PNG (`rag map -o map.png`: matplotlib, drawn by the CLI).
"""

from __future__ import annotations

import html
import json
import logging
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rag.errors import ConfigError, InvalidRequestError
from rag.text.terms import FRAMING, STOPWORDS, words

logger = logging.getLogger(__name__)

MAP_FORMATS = ("json", "svg", "html", "png")
MAX_HIGHLIGHT = 200  # papers an answer can pick out at once
_DIMENSIONS = 50
# Words every cluster uses: no label.
_GENERIC = frozenset(
    """model models learning data results performance task tasks training trained large based method
    methods approach approaches problem problems show shows paper work existing propose proposed
    via using use across however new novel significant significantly state art various different
    improve improves improved improving achieve achieves efficient effective effectively demonstrate
    extensive experiments experimental code available github com https www able well often even
    first two three many several high better best achieving remains remain key including during between
    within without toward towards among while""".split()
)
PALETTE = (
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#bab0ac",
    "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f", "#aec7e8",
    "#ffbb78", "#98df8a", "#c5b0d5", "#c49c94", "#9edae5", "#dbdb8d", "#ff9896", "#f7b6d2",
)
HIGHLIGHT = "#d62728"


class MapPoint(BaseModel):
    paper_id: str
    title: str
    decision: str = ""
    x: float = Field(description="0-1, left to right")
    y: float = Field(description="0-1, bottom to top")
    cluster: int


class MapCluster(BaseModel):
    number: int
    label: str = Field(description="Its three most distinctive words or word pairs, '·'-separated.")
    size: int
    x: float
    y: float


class FieldMap(BaseModel):
    """Every stored paper as a point in [0, 1]², in labelled clusters."""

    revision: str = Field(description="The store revision it was computed from.")
    papers: int
    method: str
    seconds: float = Field(description="How long its computation took.")
    cached: bool = Field(False, description="Read from the map kept for this store revision.")
    points: list[MapPoint]
    clusters: list[MapCluster]

    def svg(self, highlight: Collection[str] = (), link: Callable[[str], str] | None = None,
            width: int = 900, height: int = 620, new_tab: bool = False) -> str:
        """An SVG of the map: a point per paper in its cluster's colour (its title shows on hover,
        a click opens `link(paper_id)`, in a new tab with `new_tab`; default: its OpenReview page),
        the cluster labels, and the `highlight` papers larger, in red, drawn last."""
        href = link or (lambda pid: f"https://openreview.net/forum?id={pid}")
        target = ' target="_blank" rel="noopener"' if new_tab else ""
        picked = set(highlight)
        pad = 24

        def at(p: MapPoint | MapCluster) -> tuple[float, float]:
            return pad + p.x * (width - 2 * pad), pad + (1 - p.y) * (height - 2 * pad)

        out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="rag-map" viewBox="0 0 {width} {height}" '
               f'width="100%" role="img" aria-label="Map of {self.papers} papers">',
               f'<rect width="{width}" height="{height}" fill="#ffffff"/>']
        for group in (False, True):  # the picked papers last, on top
            for p in self.points:
                if (p.paper_id in picked) != group:
                    continue
                x, y = at(p)
                colour = HIGHLIGHT if group else PALETTE[p.cluster % len(PALETTE)]
                r, extra = (6.5, ' stroke="#000" stroke-width="1.2"') if group else (3.2, ' fill-opacity="0.75"')
                mark = ' data-picked="1"' if group else ""
                out.append(
                    f'<a href="{html.escape(href(p.paper_id), quote=True)}"{target} class="rag-map-point" '
                    f'data-paper-id="{html.escape(p.paper_id, quote=True)}"{mark}>'
                    f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{colour}"{extra}>'
                    f"<title>{html.escape(p.title)}</title></circle></a>"
                )
        for c in self.clusters:
            x, y = at(c)
            out.append(
                f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" font-family="sans-serif" font-size="12" '
                f'font-weight="600" fill="#222" stroke="#fff" stroke-width="3" paint-order="stroke" '
                f'class="rag-map-label">{html.escape(c.label)}</text>'
            )
        out.append("</svg>")
        return "".join(out)

    def html(self, highlight: Collection[str] = (), title: str = "Map of the field") -> str:
        """A self-contained page: the SVG (points link to OpenReview), what it shows, and the clusters."""
        rows = "".join(f"<li>{html.escape(c.label)} ({c.size})</li>" for c in sorted(self.clusters, key=lambda c: -c.size))
        note = f" The {len(set(highlight))} papers of the answer are in red." if highlight else ""
        return (
            f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
            f"<body style='font-family:sans-serif;max-width:960px;margin:auto'><h1>{html.escape(title)}</h1>"
            f"<p>{self.papers} papers, {len(self.clusters)} clusters ({html.escape(self.method)}). Hover a point "
            f"for its title; click it for its OpenReview page.{note}</p>{self.svg(highlight)}"
            f"<h2>Clusters</h2><ul>{rows}</ul></body></html>"
        )

    def render(self, fmt: str, highlight: Collection[str] = ()) -> str:
        """The map as text: json, svg or html."""
        if fmt == "json":
            return self.model_dump_json()
        if fmt == "svg":
            return self.svg(highlight)
        if fmt == "html":
            return self.html(highlight)
        raise InvalidRequestError(f"unknown map format {fmt!r}; use one of json, svg, html (png: a file)")


def check_highlight(ids: Sequence[str]) -> list[str]:
    """The ids to pick out, at most MAX_HIGHLIGHT (InvalidRequestError beyond)."""
    out = list(dict.fromkeys(i.strip() for i in ids if i.strip()))
    if len(out) > MAX_HIGHLIGHT:
        raise InvalidRequestError(f"{len(out)} papers to pick out on the map; at most {MAX_HIGHLIGHT}")
    return out


def compute(ids: Sequence[str], titles: Sequence[str], texts: Sequence[str], decisions: Sequence[str],
            vectors: Any, revision: str, progress: bool = False) -> FieldMap:
    """The map of these papers (one row of `vectors` each) with a progress bar over its steps."""
    import numpy as np
    from tqdm import tqdm

    t0 = time.perf_counter()
    n = len(ids)
    steps = tqdm(total=4, desc=f"map of {n} papers", disable=not progress, unit="step")
    x = np.asarray(vectors, dtype=np.float32).reshape(n, -1) if n else np.zeros((0, 2), dtype=np.float32)
    reduced = _pca(x, min(_DIMENSIONS, max(n - 1, 1), x.shape[1]))
    steps.update()
    layout = _layout(reduced)
    steps.update()
    k = max(1, min(24, round(n / 90))) if n >= 40 else max(1, min(n, 2 if n >= 4 else 1))
    clusters = _kmeans(reduced, k)
    steps.update()
    labels = _labels([f"{t}. {t}. {a}" for t, a in zip(titles, texts)], clusters, k)  # titles count thrice
    steps.update()
    steps.close()
    lo, hi = layout.min(axis=0) if n else np.zeros(2), layout.max(axis=0) if n else np.ones(2)
    span = np.where(hi - lo > 0, hi - lo, 1.0)
    unit_xy = (layout - lo) / span if n else layout
    points = [
        MapPoint(paper_id=pid, title=t, decision=d, x=round(float(p[0]), 4), y=round(float(p[1]), 4), cluster=int(c))
        for pid, t, d, p, c in zip(ids, titles, decisions, unit_xy, clusters)
    ]
    groups = []
    for c in range(k):
        members = unit_xy[clusters == c]
        if len(members):
            cx, cy = np.median(members, axis=0)
            groups.append(MapCluster(number=c, label=labels[c], size=int(len(members)), x=round(float(cx), 4),
                                     y=round(float(cy), 4)))
    method = "t-SNE of the paper vectors (PCA 50), k-means clusters" if n >= 5 else "PCA of the paper vectors"
    return FieldMap(revision=revision, papers=n, method=method, seconds=round(time.perf_counter() - t0, 2),
                    points=points, clusters=groups)


def _pca(x: Any, dims: int) -> Any:
    import numpy as np

    if len(x) == 0:
        return np.zeros((0, dims), dtype=np.float32)
    centred = x - x.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return (centred @ vt[:dims].T).astype(np.float32)


def _layout(reduced: Any) -> Any:
    """2D positions: t-SNE (a fixed seed: the same store gives the same map); PCA's first two
    components for a handful of papers."""
    import numpy as np

    n = len(reduced)
    if n < 5:
        out = np.zeros((n, 2), dtype=np.float32)
        out[:, : min(2, reduced.shape[1])] = reduced[:, :2]
        return out
    try:
        from sklearn.manifold import TSNE
    except ImportError as exc:
        raise ConfigError("the map of the field needs scikit-learn, a dependency of this package: "
                          "run the README's setup again") from exc
    tsne = TSNE(n_components=2, perplexity=min(30.0, (n - 1) / 3), init="pca", learning_rate="auto",
                random_state=0, metric="cosine" if n < 5000 else "euclidean")
    return np.asarray(tsne.fit_transform(reduced), dtype=np.float32)


def _kmeans(reduced: Any, k: int) -> Any:
    import numpy as np

    if k <= 1 or len(reduced) <= k:
        return np.zeros(len(reduced), dtype=int) if k <= 1 else np.arange(len(reduced))
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=k, n_init=4, random_state=0).fit_predict(reduced)


# Parts of compounds ("pre-trained", "multi-agent"): a label in a pair, not alone.
_PARTS = frozenset("pre non multi self sub semi cross real world long high low end open".split())


def _terms(text: str) -> set[str]:
    """The words and adjacent word pairs (within a clause: not across punctuation) of a text that
    could label a cluster."""
    out: set[str] = set()
    for clause in re.split(r"[.,;:()\[\]{}!?]", text):
        keep = [w if (w not in STOPWORDS and w not in FRAMING and w not in _GENERIC and len(w) > 2
                      and not w.isdigit()) else "" for w in words(clause)]
        out |= {w for w in keep if w and w not in _PARTS}
        out |= {f"{a} {b}" for a, b in zip(keep, keep[1:]) if a and b}
    return out


def _labels(texts: Sequence[str], clusters: Any, k: int) -> list[str]:
    """Each cluster's three most distinctive terms: used by many of its papers and few others
    (document frequency in the cluster × log of how much rarer it is outside)."""
    n = len(texts)
    per_paper = [_terms(t) for t in texts]
    df: Counter[str] = Counter(t for terms in per_paper for t in terms)
    labels = []
    for c in range(k):
        members = [i for i in range(n) if int(clusters[i]) == c]
        if not members:
            labels.append("")
            continue
        inside: Counter[str] = Counter(t for i in members for t in per_paper[i])
        floor = max(2, math.ceil(0.12 * len(members))) if len(members) >= 4 else 1
        scored = sorted(
            ((cnt / len(members)) * math.log(n / df[t]) * (1.25 if " " in t else 1.0), t)
            for t, cnt in inside.items() if cnt >= floor and df[t] < n
        )
        chosen: list[str] = []
        for _, t in reversed(scored):
            if any(t in c_ or c_ in t for c_ in chosen):
                continue
            chosen.append(t)
            if len(chosen) == 3:
                break
        labels.append(" · ".join(chosen))
    return labels


def load(path: Path, revision: str) -> FieldMap | None:
    """The map kept at `path` when it was computed from `revision`, else None."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        kept = FieldMap.model_validate(data)
    except (OSError, ValueError):
        return None
    return kept.model_copy(update={"cached": True}) if kept.revision == revision else None


def save(path: Path, fmap: FieldMap) -> None:
    """Keep the map beside the store (written whole, then renamed: a reader never sees half a file)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(fmap.model_dump_json(), encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:  # a read-only store still answers; the map is computed again next time
        logger.warning("could not keep the map of the field at %s: %s", path, exc)
