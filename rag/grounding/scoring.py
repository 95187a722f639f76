"""A learned second opinion on the admission: how likely each candidate is to be on a reader's list.

The admission (rag.grounding.admission) reads a question into a topic and constraints and lists a paper
only when its words state each of them. Words miss papers that say it otherwise ("score-based MRI
denoising" for "diffusion models for medical image restoration") and admit papers that hold the words
for another purpose. The candidates' judgements, their places in the search and their sentences'
closeness to the question are each evidence; a logistic model weighs them together, trained on the
writers' question sets (`evals/train_relevance.py`: papers on a writer's list against the rest of the
pool) and checked on sets it was not trained on.

When the rules list some paper, the list becomes the candidates the model puts at or above its threshold,
most likely first. What stays whatever it says: the papers the question names, those the search ranks first
for an example it gives, those the rules list of the search's first five, at least three of the rules' own,
and the rules' whole list (in the model's order) for a field named, not asked about, that they list a page
of papers for. What a paper must be is the rules' to say: one of another direction or kind than the question asks for (an attack, for
"which papers defend …"; a method, for "which benchmarks …") is never listed. When the rules list nothing,
nothing is added: a false premise stays named, and the model never turns a refusal into a list. A question
read loosely (no rule excludes a paper) lists the candidates the model finds likely (`LOOSE_THRESHOLD`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag.errors import ConfigError
from rag.grounding.admission import Admission
from rag.store.vectors import unit_rows
from rag.text.roles import OWN

BUNDLED = Path(__file__).resolve().parent.parent / "data" / "relevance_model.json"

# Per candidate: its search score and best chunk cosine; its sentences' cosines to the question (best, best
# own sentence, mean of the best two); the admission's judgement of it; its place in the search; and, per
# question, how far it is from the pool's best and how many papers the rules list.
FEATURES: tuple[str, ...] = (
    "score", "dense", "max_cos", "own_cos", "top2_cos",
    "topic_all", "topic_own", "central", "uses", "mentions", "on_topic", "admitted", "related",
    "missing", "constraints", "constraint_min", "constraint_mean", "together", "listed",
    "log_rank", "cos_below_best", "dense_below_best", "log_listed", "list_question",
)

EmbedFn = Callable[[list[str]], list[list[float]]]


def candidate_features(asked: str, adm: Admission, order: Sequence[int], listed: Collection[int],
                       embed: EmbedFn, list_question: bool) -> dict[int, np.ndarray]:
    """`FEATURES` of each candidate in `order` (source numbers, search order); `asked`: the question
    as searched (without its asides), `listed`: what the rules list."""
    numbers = [n for n in order if n in adm.judgements]
    if not numbers:
        return {}
    sentences: list[str] = []
    owner: list[int] = []
    own: list[bool] = []
    for n in numbers:
        paper = adm.papers[n]
        sentences += paper.sentences
        owner += [n] * len(paper.sentences)
        own += [r in OWN for r in paper.roles]
    vecs = unit_rows(embed([asked] + sentences))
    cos = vecs[1:] @ vecs[0] if sentences else np.zeros(0, dtype=np.float32)
    by_owner = np.asarray(owner)
    own_mask = np.asarray(own, dtype=bool)
    best_cos: dict[int, tuple[float, float, float]] = {}
    for n in numbers:
        mine = by_owner == n
        allc, ownc = cos[mine], cos[mine & own_mask]
        best_cos[n] = (
            float(allc.max()) if allc.size else 0.0,
            float(ownc.max()) if ownc.size else 0.0,
            float(np.sort(allc)[-2:].mean()) if allc.size else 0.0,
        )
    top_cos = max(c[0] for c in best_cos.values())
    top_dense = max(adm.papers[n].source.dense_score or 0.0 for n in numbers)
    log_listed = math.log1p(len(listed))
    out: dict[int, np.ndarray] = {}
    for rank, n in enumerate(numbers):
        j, source = adm.judgements[n], adm.papers[n].source
        cons = j.constraints or [1.0]
        max_cos, own_cos, top2 = best_cos[n]
        dense = source.dense_score or 0.0
        out[n] = np.array([
            source.score, dense, max_cos, own_cos, top2,
            j.topic_all, j.topic_own, j.central, j.uses, j.mentions, j.on_topic, j.admitted, j.related,
            len(j.missing), len(j.constraints), min(cons), sum(cons) / len(cons), adm.together(n), n in listed,
            math.log1p(rank), max_cos - top_cos, dense - top_dense, log_listed, list_question,
        ], dtype=np.float64)
    return out


@dataclass(frozen=True)
class RelevanceModel:
    """Logistic weights over standardised `FEATURES`, and the probability at which a paper is listed."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    threshold: float
    trained_on: str = ""

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        z = ((np.atleast_2d(rows) - self.mean) / self.scale) @ self.coef + self.intercept
        out: np.ndarray = 1.0 / (1.0 + np.exp(-z))
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "features": list(FEATURES), "mean": self.mean.tolist(), "scale": self.scale.tolist(),
            "coef": self.coef.tolist(), "intercept": self.intercept, "threshold": self.threshold,
            "trained_on": self.trained_on,
        }

    @classmethod
    def load(cls, path: Path) -> RelevanceModel:
        """The model in `path`; a file for other features, or not one of these, is a clear error."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if raw["features"] != list(FEATURES):
                raise ValueError(f"it was trained on other features ({len(raw['features'])}, not {len(FEATURES)})")
            model = cls(np.asarray(raw["mean"], dtype=np.float64), np.asarray(raw["scale"], dtype=np.float64),
                        np.asarray(raw["coef"], dtype=np.float64), float(raw["intercept"]),
                        float(raw["threshold"]), str(raw.get("trained_on", "")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"cannot read the relevance model {path}: {exc}") from exc
        if not (model.mean.shape == model.scale.shape == model.coef.shape == (len(FEATURES),)):
            raise ConfigError(f"cannot read the relevance model {path}: its weights do not match its features")
        return model


def fit(rows: np.ndarray, labels: np.ndarray, threshold: float, ridge: float = 1.0,
        trained_on: str = "") -> RelevanceModel:
    """Logistic regression by Newton's method on standardised rows, with an L2 penalty of `ridge`
    (labels 0 or 1)."""
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    scale[scale == 0] = 1.0
    x = np.hstack([(rows - mean) / scale, np.ones((len(rows), 1))])
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], ridge)
    penalty[-1] = 0.0  # (the intercept is not shrunk)
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - labels) + penalty * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return RelevanceModel(mean, scale, w[:-1], float(w[-1]), threshold, trained_on)


# A field named, not asked about ("Diffusion models", "Awesome LLM Unlearning", "LLM > Interpretability"), that
# the rules list a page of papers or more for: every paper of it answers, and the writers' lists the model learned
# from are rarely that wide (a median of 5 papers). Its list stays the rules', in the model's order. (At 20,
# topics_dev lost gold papers of 4 such fields.) A question the rules list as many papers for is relisted like any
# other: they admitted too much (on the 41 writers' sets, each answered by a model trained on the others, papers on
# the writers' lists 0.659 of what is listed and 0.472 of theirs found, against 0.647 and 0.481 when such
# questions kept the rules' list too: of the 110 papers that leaves out, 37 were on a list).
BROAD = 10
# A list is never cut below this many of the papers the rules list (or all of them, when fewer).
LEAST = 3


# A question read loosely (a how/why question or a long request: its words rank the papers, none excludes one) has
# no paper the rules list, so every candidate's "listed" features are low and the model's probabilities with
# them. Its papers are those at or above this lower threshold, most likely first. (On the 121 writers' questions
# answered so, each set by a model trained on the others: papers on the writers' lists 0.561 -> 0.592 of what is
# shown, 0.436 -> 0.454 of theirs found; at the list threshold 0.45, 0.667 and 0.371.)
LOOSE_THRESHOLD = 0.35


def chances(model: RelevanceModel, features: dict[int, np.ndarray]) -> dict[int, float]:
    """Each candidate's probability of being on a reader's list, most likely first."""
    if not features:
        return {}
    probs = model.probabilities(np.vstack(list(features.values())))
    return dict(sorted(zip(features, map(float, probs)), key=lambda x: -x[1]))


def likeliest(model: RelevanceModel, features: dict[int, np.ndarray], threshold: float) -> list[int]:
    """The candidates whose probability reaches `threshold`, most likely first."""
    return [n for n, p in chances(model, features).items() if p >= threshold]


def relist(model: RelevanceModel, features: dict[int, np.ndarray], listed: Sequence[int],
           keep: Collection[int] = (), barred: Collection[int] = (),
           field: bool = False) -> tuple[list[int], dict[int, float]]:
    """The papers to list when the rules list `listed`: `keep` (those the question names, those found by
    an example it gives) first, then every candidate at or above the threshold, most likely first, at least
    `LEAST` of the rules' own; for a `field` (named, not asked about) the rules list `BROAD` papers of, the
    rules' list in the model's order. `barred`: never added (of another kind than the question asks for: an
    attack, for "which papers defend …"). With each candidate's probability."""
    if not features or not listed:
        return list(listed), {}
    p = chances(model, features)  # (most likely first)
    ranked = [n for n in p if n in set(listed)] + [n for n in listed if n not in p]
    first = [n for n in listed if n in keep]
    if field and len(listed) >= BROAD:
        return first + [n for n in ranked if n not in first], p
    out = first + [n for n in p if p[n] >= model.threshold and n not in first and n not in barred]
    short = min(len(listed), LEAST) - len(out)
    if short > 0:
        out += [n for n in ranked if n not in out][:short]
    return out, p
