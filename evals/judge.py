"""Citation support and answer quality: the support checker, or an LLM judge when configured."""

from __future__ import annotations

import logging
import re
import string
from collections.abc import Sequence
from typing import Any

from rag import prompts
from rag.errors import ConfigError

from .config import EvalSettings
from .errors import EvalError

logger = logging.getLogger(__name__)

PROMPTS_DIR = prompts.PROMPTS_DIR / "eval"  # prompts/eval/, shipped in the package with the others
_VERDICT = re.compile(r"\b(yes|no)\b", re.I)



def load_prompt(name: str) -> str:
    """The text of prompts/eval/<name>.txt, through the library's prompt loader."""
    try:
        return prompts.load(f"eval/{name}")
    except ConfigError as exc:
        raise EvalError(str(exc)) from exc


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
    """The judge LLM from RAG_EVAL__JUDGE_* (None when no endpoint is configured)."""
    if not cfg.judge_base_url:
        return None
    if not cfg.judge_model:
        raise EvalError("RAG_EVAL__JUDGE_MODEL (or --judge-model) must name the judge model")
    from rag.models.llm import build_llm
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


class SupportScorer:
    """Scores (claim sentence, cited source) pairs with the support checker (`rag.grounding.support`), or with
    an LLM judge when one is configured. The checker's precision on the labelled set is measured by
    `evals.support_eval` and printed in every report next to the scores."""

    def __init__(self, judge: Any | None = None, precision: dict[str, Any] | None = None):
        self.judge = judge
        self.precision = precision
        self.errors = 0

    @property
    def method(self) -> str:
        """How support is decided, as the report labels it."""
        if self.judge is not None:
            return f"LLM judge ({judge_name(self.judge)})"
        from rag.grounding.support import CHECKER_NAME

        label = f"support checker {CHECKER_NAME} (rag/grounding/support.py)"
        if self.precision:
            p = self.precision
            label += (
                f"; on {p['pairs']} labelled pairs: precision {p['precision']:.3f}, recall {p['recall']:.3f}"
            )
        return label

    @property
    def is_proxy(self) -> bool:
        return False

    def score(self, pairs: Sequence[tuple[str, Any]]) -> list[dict[str, Any]]:
        """For each (claim, Source): {'supported': bool | None, 'rule': str, 'coverage': float}."""
        from rag.grounding.support import check_source

        out = []
        for claim, source in pairs:
            v = check_source(claim, source.title, source.text, source.authors)
            supported: bool | None = v.supported
            if self.judge is not None:
                supported = self._ask_judge(claim, source.text)
            out.append({"supported": supported, "rule": v.rule, "coverage": round(v.coverage, 4)})
        return out

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
