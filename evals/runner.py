"""Runs an evaluation: ingest the corpus into an eval store, retrieve and answer, cache each question."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag import RAG, Settings
from rag.ingest.corpus import load_many
from rag.prompts import PROMPTS_DIR
from rag.settings import StoreSettings
from rag.text.citations import claims
from rag.types import Answer

from .cache import ResultCache, row_key
from .config import EvalSettings, RunConfig, fingerprint, model_settings
from .datasets import Dataset, check_gold, file_sha256, load_dataset
from .judge import PROMPTS_DIR as EVAL_PROMPTS_DIR
from .judge import AnswerJudge, SupportScorer, build_judge, judge_name
from .metrics import (
    citation_coverage,
    cited_paper_validity,
    marker_validity,
    mean,
)
from .support_eval import checker_precision

logger = logging.getLogger(__name__)


@dataclass
class Stage:
    """One configuration on one dataset: its cached rows once it has run."""

    kind: str  # "retrieval" | "answer"
    config: str  # "dense", "answer-hybrid", ...
    mode: str
    dataset: Dataset
    fingerprint: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    computed: int = 0  # questions computed in this run (the rest came from the cache)
    seconds: float = 0.0


@dataclass
class RunResult:
    """Everything a report needs: the stages with their rows, and how the run was set up."""

    run: RunConfig
    stages: list[Stage]
    datasets: list[Dataset]
    corpus: dict[str, Any]
    settings: dict[str, Any]
    support_method: str | None
    support_is_proxy: bool
    judge: str | None
    seconds: dict[str, float]


def _prompts_hash() -> str:
    files = sorted(PROMPTS_DIR.glob("*.txt")) + sorted(EVAL_PROMPTS_DIR.glob("*.txt"))
    return fingerprint({p.name: p.read_text(encoding="utf-8") for p in files})


def eval_settings_for(settings: Settings, out: Path, corpus_sha: str, store_dir: Path | None = None) -> Settings:
    """The user's settings with the store moved into the output directory, or into `store_dir` that
    several runs share (never the user's store). The store records the embedding model that wrote it
    and refuses another, so a shared store is reused only for the same corpus and model."""
    store = StoreSettings(
        path=store_dir if store_dir is not None else out / "store",
        chroma_url=None,
        collection=f"eval_{corpus_sha[:12]}",
        auto_seed=False,
    )
    return settings.model_copy(update={"store": store})


class Evaluation:
    """Scores the pipeline on datasets under several configurations; resumable through its cache."""

    def __init__(
        self,
        run: RunConfig,
        settings: Settings | None = None,
        eval_settings: EvalSettings | None = None,
        judge: Any | None = None,
    ):
        self.run_cfg = run
        self.eval_settings = eval_settings or EvalSettings()
        self.judge = judge if judge is not None else build_judge(self.eval_settings)
        self.out = Path(run.out)
        self.corpus_path = Path(run.corpus)
        self.corpus_sha = file_sha256(self.corpus_path) if self.corpus_path.is_file() else ""
        self.settings = eval_settings_for(settings or Settings(), self.out, self.corpus_sha, run.store)
        self.rag: RAG | None = None

    # -- setup ------------------------------------------------------------------------------
    def _load(self) -> tuple[list[Dataset], dict[str, Any]]:
        loaded = load_many([self.corpus_path])  # raises CorpusError for a missing or bad file
        ids = [p.id for p in loaded.papers]
        datasets = []
        for spec in self.run_cfg.datasets:
            ds = load_dataset(spec)
            check_gold(ds, ids)
            datasets.append(ds.limited(self.run_cfg.limit))
        names = [d.name for d in datasets]
        if len(set(names)) != len(names):
            from .errors import EvalError

            raise EvalError(f"two datasets share a name: {names}; rename one file")
        corpus = {"path": str(self.corpus_path), "sha256": self.corpus_sha, "papers": len(ids)}
        return datasets, corpus

    def _stages(self, datasets: list[Dataset], support: SupportScorer | None) -> list[Stage]:
        assert self.rag is not None
        base = model_settings(self.settings, self.rag.store.model_record())
        retrieval_fp = {
            "corpus": self.corpus_sha,
            "embedding": base["embedding_model"],
            "ingest": base["ingest"],
            # Retrieval depth and mode are set per stage; the refusal threshold only matters to answers.
            "retrieval": {
                k: v for k, v in base["retrieval"].items() if k not in ("top_k", "mode", "refusal_threshold")
            },
            "depth": self.run_cfg.depth,
        }
        stages = []
        # Without gold papers only best_dense matters (calibration); it is the same in every mode.
        modes = self.run_cfg.retrievers
        calibration_mode = "dense" if "dense" in modes else modes[0]
        for mode in modes:
            fp = fingerprint({"kind": "retrieval", "mode": mode, **retrieval_fp})
            stages += [
                Stage("retrieval", mode, mode, ds, fp)
                for ds in datasets
                if ds.has_gold or mode == calibration_mode
            ]
        if self.run_cfg.answers:
            modes = self.run_cfg.answer_retrievers or [self.settings.retrieval.mode]
            for mode in modes:
                fp = fingerprint(
                    {
                        "kind": "answer",
                        "mode": mode,
                        **retrieval_fp,
                        "settings": base,
                        "prompts": _prompts_hash(),
                        "support": support.method if support else None,
                        "judge": judge_name(self.judge) if self.judge is not None else None,
                    }
                )
                stages += [
                    Stage("answer", f"answer-{mode}", mode, ds.answer_subset(self.run_cfg.answer_limit), fp)
                    for ds in datasets
                ]
        return stages

    # -- run --------------------------------------------------------------------------------
    def run(self, progress: bool = True) -> RunResult:
        """Ingest (idempotent), then compute every question not already in the cache."""
        t0 = time.perf_counter()
        datasets, corpus = self._load()
        self.out.mkdir(parents=True, exist_ok=True)
        self.rag = RAG(self.settings)
        report = self.rag.ingest([self.corpus_path], progress=progress)
        logger.info(
            "eval store: %d added, %d unchanged papers", report.added + report.updated, report.unchanged
        )
        seconds = {"ingest": time.perf_counter() - t0}

        support = None
        answer_judge = None
        if self.run_cfg.answers:
            support = SupportScorer(self.judge, checker_precision())
            answer_judge = AnswerJudge(self.judge) if self.judge is not None else None

        stages = self._stages(datasets, support)
        if any(s.kind == "answer" for s in stages):
            seconds["llm_warmup"] = self._warm_up()
        for stage in stages:
            t = time.perf_counter()
            if stage.kind == "retrieval":
                self._run_stage(stage, self._retrieve_row, progress)
            else:
                self._run_stage(stage, lambda s, it: self._answer_row(s, it, support, answer_judge), progress)
            stage.seconds = time.perf_counter() - t
        seconds["total"] = time.perf_counter() - t0
        return RunResult(
            run=self.run_cfg,
            stages=stages,
            datasets=datasets,
            corpus=corpus,
            settings=model_settings(self.settings, self.rag.store.model_record() if self.rag else None),
            support_method=support.method if support else None,
            support_is_proxy=bool(support and support.is_proxy),
            judge=judge_name(self.judge) if self.judge is not None else None,
            seconds=seconds,
        )

    def _warm_up(self) -> float:
        """Load the LLM with one tiny request, so first-token times measure answers, not model loading."""
        assert self.rag is not None
        t = time.perf_counter()
        try:
            self.rag.llm.complete("Say OK.", max_tokens=2)
        except Exception as exc:  # the first real question reports an unreachable LLM properly
            logger.warning("LLM warm-up failed: %s", exc)
        return time.perf_counter() - t

    def _run_stage(
        self, stage: Stage, compute: Callable[[Stage, Any], dict[str, Any]], progress: bool
    ) -> None:
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in stage.dataset.name)
        cache = ResultCache(self.out / "cache" / f"{safe}.{stage.config}.{stage.fingerprint}.jsonl")
        keys = [row_key(stage.fingerprint, stage.dataset.sha256, it.qid) for it in stage.dataset.items]
        done = sum(cache.get(k) is not None for k in keys)
        bar = _bar(len(keys), done, f"{stage.config} · {stage.dataset.name}", progress)
        try:
            for item, key in zip(stage.dataset.items, keys, strict=True):
                row = cache.get(key)
                if row is None:
                    row = {"key": key, **_item_fields(item), **compute(stage, item)}
                    cache.put(row)
                    stage.computed += 1
                    if bar is not None:
                        bar.update(1)
                stage.rows.append(row)
        finally:
            if bar is not None:
                bar.close()
        logger.info(
            "%s on %s: %d computed, %d from cache",
            stage.config,
            stage.dataset.name,
            stage.computed,
            len(keys) - stage.computed,
        )

    def _retrieve_row(self, stage: Stage, item: Any) -> dict[str, Any]:
        assert self.rag is not None
        t = time.perf_counter()
        r = self.rag.retrieve(item.query, top_k=self.run_cfg.depth, retriever=stage.mode)  # type: ignore[arg-type]
        return {
            "retrieved": [s.paper_id for s in r.sources],
            "dense_scores": [s.dense_score for s in r.sources],
            "best_dense": r.best_dense,
            "ms": round((time.perf_counter() - t) * 1000, 2),
        }

    def _answer_row(
        self, stage: Stage, item: Any, support: SupportScorer | None, judge: AnswerJudge | None
    ) -> dict[str, Any]:
        assert self.rag is not None
        answer = self.rag.ask(item.query, retriever=stage.mode)  # type: ignore[arg-type]
        return score_answer(answer, item.gold_ids, support, judge)


def score_answer(
    answer: Answer, gold_ids: Iterable[str], support: SupportScorer | None, judge: AnswerJudge | None = None
) -> dict[str, Any]:
    """Per-answer measurements: refusal, citation validity, coverage and support, judge scores."""
    gold = set(gold_ids)
    retrieved = [s.paper_id for s in answer.sources]
    row: dict[str, Any] = {
        "text": answer.text,
        "raw_text": answer.raw_text,
        "refused": answer.refused,
        "llm_called": answer.llm_called,
        "grounded": answer.grounded,
        "sources": retrieved,
        "citations": [
            {"number": c.number, "paper_id": c.paper_id, "kind": c.kind, "support": c.support}
            for c in answer.citations
        ],
        "removed_markers": answer.removed_markers,
        "mode": answer.mode,
        "refusal_reason": answer.refusal_reason,
        "removed_unsupported": answer.removed_unsupported,
        "completion_tokens": answer.completion_tokens,
        "timings": answer.timings.model_dump(),
        "gold_in_sources": bool(gold & set(retrieved)) if gold else None,
    }
    if answer.refused:
        return row
    by_number = {s.number: s for s in answer.sources}
    cited_ids = [c.paper_id for c in answer.citations]
    pairs = [(sentence, n) for sentence, nums in claims(answer.text) for n in nums if n in by_number]
    scored = (
        support.score([(s, by_number[n]) for s, n in pairs])
        if support
        else [{"supported": None, "rule": None, "coverage": None} for _ in pairs]
    )
    row.update(
        citation_coverage=citation_coverage(answer.text),
        raw_marker_validity=marker_validity(answer.raw_text, by_number),
        citation_validity=cited_paper_validity(cited_ids, retrieved),
        support_pairs=[
            {"sentence": s, "number": n, "paper_id": by_number[n].paper_id, **res}
            for (s, n), res in zip(pairs, scored, strict=True)
        ],
        citation_support=mean(None if r["supported"] is None else float(r["supported"]) for r in scored),
        gold_cited=bool(gold & set(cited_ids)) if gold else None,
    )
    if judge is not None:
        row.update(judge.evaluate(answer.question, answer.text, [s.text for s in answer.sources]))
    return row


def _item_fields(item: Any) -> dict[str, Any]:
    return {
        "qid": item.qid,
        "query": item.query,
        "gold_ids": list(item.gold_ids),
        "answerable": item.answerable,
        "category": item.category,
    }


def _bar(total: int, done: int, desc: str, enabled: bool) -> Any:
    if not enabled or done >= total:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=done, desc=desc, unit="q", dynamic_ncols=True)
