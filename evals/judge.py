"""Citation support and answer quality: an LLM judge when configured, else an embedding proxy."""

from __future__ import annotations

import logging
import re
import string
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from rag.citations import split_sentences

from .config import EvalSettings
from .errors import EvalError

logger = logging.getLogger(__name__)

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
_VERDICT = re.compile(r"\b(yes|no)\b", re.I)

EmbedFn = Callable[[list[str]], list[list[float]]]


@cache
def load_prompt(name: str) -> str:
    """The text of evals/prompts/<name>.txt."""
    path = PROMPTS_DIR / f"{name}.txt"
    if not path.is_file():
        raise EvalError(f"prompt file missing: {path}")
    return path.read_text(encoding="utf-8").rstrip("\n")


def render_prompt(name: str, **values: str) -> str:
    """Fill a template strictly: a missing or unexpected variable is an error."""
    template = load_prompt(name)
    expected = {f for _, f, _, _ in string.Formatter().parse(template) if f}
    if expected != set(values):
        raise EvalError(f"prompt {name!r} expects {sorted(expected)}, got {sorted(values)}")
    return template.format(**values)


def parse_verdict(text: str) -> bool | None:
    """YES → True, NO → False, from the first yes/no word of a reply (None: neither)."""
    m = _VERDICT.search(text or "")
    return None if m is None else m.group(1).lower() == "yes"


def build_judge(cfg: EvalSettings) -> Any | None:
    """The judge LLM from RAG_EVAL_JUDGE_* (None when no endpoint is configured)."""
    if not cfg.judge_base_url:
        return None
    if not cfg.judge_model:
        raise EvalError("RAG_EVAL_JUDGE_MODEL (or --judge-model) must name the judge model")
    from rag.llm import build_llm
    from rag.settings import LLMSettings

    judge = LLMSettings(
        base_url=cfg.judge_base_url,
        model=cfg.judge_model,
        api_key=cfg.judge_api_key,
        n_ctx=8192,
        max_tokens=64,
        temperature=0.0,
        timeout=cfg.judge_timeout,
        max_retries=2,
    )
    return build_llm(judge)


def judge_name(judge: Any) -> str:
    """A label naming the judge model."""
    meta = getattr(judge, "metadata", None)
    return str(getattr(meta, "model_name", None) or getattr(judge, "model", None) or type(judge).__name__)


def _unavailable(exc: BaseException) -> bool:
    import httpx
    import openai

    return isinstance(
        exc, (openai.APIConnectionError, openai.AuthenticationError, httpx.ConnectError, ConnectionError)
    )


def _unit(vectors: list[list[float]]) -> np.ndarray:
    arr = np.asarray(vectors, dtype=np.float32)
    return arr / np.maximum(np.linalg.norm(arr, axis=1, keepdims=True), 1e-12)


class SupportScorer:
    """Scores (claim sentence, cited abstract) pairs: judge verdicts or proxy cosine ≥ threshold."""

    def __init__(self, embed: EmbedFn, threshold: float, judge: Any | None = None):
        self.embed = embed
        self.threshold = threshold
        self.judge = judge
        self.errors = 0

    @property
    def method(self) -> str:
        """How support is decided, as the report labels it."""
        if self.judge is not None:
            return f"LLM judge ({judge_name(self.judge)})"
        return f"embedding proxy (max cosine of sentence vs cited abstract sentences >= {self.threshold:.2f})"

    @property
    def is_proxy(self) -> bool:
        return self.judge is None

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        """For each (claim, abstract): {'supported': bool | None, 'similarity': float}."""
        if not pairs:
            return []
        sims = self._similarities(pairs)
        out = []
        for (claim, passage), sim in zip(pairs, sims, strict=True):
            if self.judge is None:
                supported: bool | None = sim >= self.threshold
            else:
                supported = self._ask_judge(claim, passage)
            out.append({"supported": supported, "similarity": round(float(sim), 4)})
        return out

    def _similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Max cosine between each claim and the sentences of its abstract."""
        passages = [[s for s in split_sentences(p) if s.strip()] or [p] for _, p in pairs]
        texts = [c for c, _ in pairs] + [s for ps in passages for s in ps]
        vecs = _unit(self.embed(texts))
        claims, rest = vecs[: len(pairs)], vecs[len(pairs) :]
        sims, pos = [], 0
        for i, ps in enumerate(passages):
            block = rest[pos : pos + len(ps)]
            pos += len(ps)
            sims.append(float(np.max(block @ claims[i])))
        return sims

    def _ask_judge(self, claim: str, passage: str) -> bool | None:
        from llama_index.core.base.llms.types import ChatMessage, MessageRole

        assert self.judge is not None
        prompt = render_prompt("citation_support", passage=passage, claim=claim)
        try:
            reply = self.judge.chat([ChatMessage(role=MessageRole.USER, content=prompt)])
        except Exception as exc:  # judge endpoints fail in many ways; only a dead one is fatal
            if _unavailable(exc):
                raise EvalError(f"the judge endpoint is unavailable: {exc}") from exc
            logger.warning("judge call failed: %s", exc)
            self.errors += 1
            return None
        verdict = parse_verdict(reply.message.content or "")
        if verdict is None:
            self.errors += 1
        return verdict


class AnswerJudge:
    """llama-index faithfulness and relevancy evaluators over the judge LLM."""

    def __init__(self, judge: Any):
        from llama_index.core.evaluation import FaithfulnessEvaluator, RelevancyEvaluator

        self.judge = judge
        self.faithfulness = FaithfulnessEvaluator(llm=judge)
        self.relevancy = RelevancyEvaluator(llm=judge)
        self.errors = 0

    def evaluate(self, query: str, answer: str, contexts: Sequence[str]) -> dict[str, float | None]:
        """{'faithfulness': 0/1, 'relevancy': 0/1} of one answer (None where the judge failed)."""
        out: dict[str, float | None] = {}
        for name, evaluator in (("faithfulness", self.faithfulness), ("relevancy", self.relevancy)):
            try:
                res = evaluator.evaluate(query=query, response=answer, contexts=list(contexts))
                out[name] = None if res.invalid_result or res.score is None else float(res.score)
            except Exception as exc:
                if _unavailable(exc):
                    raise EvalError(f"the judge endpoint is unavailable: {exc}") from exc
                logger.warning("%s evaluator failed: %s", name, exc)
                out[name] = None
            if out[name] is None:
                self.errors += 1
        return out
