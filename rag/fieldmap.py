"""A map of the field: every stored paper placed in two dimensions from its stored vector, in clusters
labelled by their distinctive words; an answer's papers can be picked out on it.

The layout is t-SNE (scikit-learn) of the papers' vectors reduced to 50 dimensions by PCA; the clusters
are k-means of the same reduced vectors (about one per 90 papers, 2 to 24), each labelled by the three
words or word pairs its titles and abstracts use most more often than the other clusters do. It is
computed once per store revision (~20 s for 2,115 papers on 2 cores, with a progress bar) and kept as
JSON beside the store's paper table; later maps of the same revision are read from there in
milliseconds. Drawn as an Altair (Vega-Lite) chart: Gradio shows it interactive (hover a point: its
title; click it: its page), and vl-convert renders it offline as SVG, a self-contained HTML page or a PNG.
"""

from __future__ import annotations

import importlib
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

    def chart(self, highlight: Collection[str] = (), link: Callable[[str], str] | None = None) -> Any:
        """The map as an Altair (Vega-Lite) chart: a point per paper in its cluster's colour (hover: its
        title, decision and cluster; click: `link(paper_id)` in a new tab, by default its OpenReview
        page), the `highlight` papers larger, in red, drawn on top, and the cluster labels. Gradio's
        `gr.Plot` shows it as it is; `render` turns it into SVG, HTML or PNG."""
        alt = _need("altair", "the map of the field")
        href = link or openreview_link
        picked = set(highlight)
        labels = {c.number: c.label for c in self.clusters}
        rows = [{"paper_id": p.paper_id, "title": p.title, "decision": p.decision or "—", "x": p.x, "y": p.y,
                 "cluster": labels.get(p.cluster, ""), "colour": PALETTE[p.cluster % len(PALETTE)],
                 "link": href(p.paper_id), "picked": p.paper_id in picked} for p in self.points]
        rows.sort(key=lambda r: bool(r["picked"]))  # the picked papers last: on top
        hidden = alt.Axis(labels=False, ticks=False, title=None, grid=False, domain=False)
        square = alt.Scale(domain=[-0.02, 1.02], nice=False)
        x, y = alt.X("x:Q", axis=hidden, scale=square), alt.Y("y:Q", axis=hidden, scale=square)
        points = alt.Chart(alt.Data(values=rows)).mark_circle(opacity=0.8).encode(
            x=x, y=y,
            color=alt.condition("datum.picked", alt.value(HIGHLIGHT), alt.Color("colour:N", scale=None)),
            size=alt.condition("datum.picked", alt.value(150), alt.value(22)),
            stroke=alt.condition("datum.picked", alt.value("#000000"), alt.value(None)),
            tooltip=[alt.Tooltip("title:N", title="Title"), alt.Tooltip("decision:N", title="Decision"),
                     alt.Tooltip("cluster:N", title="Cluster")],
            href="link:N",
            description="title:N",  # what a screen reader (and the SVG's aria-label) says: the title
        )
        names = [{"x": c.x, "y": c.y, "label": c.label} for c in self.clusters]
        labels_layer = alt.Chart(alt.Data(values=names)).mark_text(
            fontSize=11, fontWeight="bold", color="#222222", stroke="#ffffff", strokeWidth=3, strokeOpacity=0.8,
        ).encode(x=x, y=y, text="label:N")
        labels_top = labels_layer.mark_text(fontSize=11, fontWeight="bold", color="#222222")
        return alt.layer(points, labels_layer, labels_top).properties(
            width=820, height=580,
            title=f"{self.papers} papers, {len(self.clusters)} clusters",
            # vega-embed (Gradio's, and the HTML page's) reads these: SVG in the page, links in a new tab
            usermeta={"embedOptions": {"renderer": "svg", "actions": False, "loader": {"target": "_blank"}}},
        ).configure_view(stroke=None)

    def render(self, fmt: str, highlight: Collection[str] = (),
               link: Callable[[str], str] | None = None) -> str | bytes:
        """The map as json (this object), svg, html (a self-contained, interactive page) or png (bytes);
        the chart is drawn by vl-convert, offline."""
        if fmt == "json":
            return self.model_dump_json()
        if fmt not in MAP_FORMATS:
            raise InvalidRequestError(f"unknown map format {fmt!r}; use one of {', '.join(MAP_FORMATS)}")
        spec = self.chart(highlight, link).to_dict()
        vlc = _need("vl_convert", "drawing the map as SVG, HTML or PNG")
        if fmt == "svg":
            return str(vlc.vegalite_to_svg(spec))
        if fmt == "png":
            return bytes(vlc.vegalite_to_png(spec, scale=1.5))
        return str(vlc.vegalite_to_html(spec, bundle=True))


def openreview_link(paper_id: str) -> str:
    return f"https://openreview.net/forum?id={paper_id}"


def _need(module: str, what: str) -> Any:
    """`module` imported, or ConfigError saying what needs it (a dependency of this package)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(f"{what} needs {module}, a dependency of this package: run the README's setup "
                          "again") from exc


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
