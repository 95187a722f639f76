"""What an evaluation runs (datasets, retrievers, answers); judge settings are `Settings.eval` (RAG_EVAL__*)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rag.settings import RETRIEVER_MODES, EvalSettings, RetrieverMode, Settings  # noqa: F401 - EvalSettings re-exported
from rag.store.chroma import ModelRecord

from .datasets import SHARED_DIR
from .errors import EvalError

RETRIEVERS: tuple[RetrieverMode, ...] = RETRIEVER_MODES
DEFAULT_OUT = Path("reports/eval")


class RunConfig(BaseModel):
    """One evaluation run: a corpus, datasets, retriever configurations and an output directory."""

    model_config = ConfigDict(extra="forbid")

    corpus: Path = Field(description="Corpus file ingested into the eval store.")
    datasets: list[str] = Field(min_length=1, description="Dataset files or built-in names.")
    retrievers: list[RetrieverMode] = Field(default_factory=lambda: list(RETRIEVERS))
    depth: int = Field(100, ge=1, le=1000, description="Papers retrieved per question for retrieval metrics.")
    answers: bool = Field(False, description="Also generate answers and score them.")
    answer_retrievers: list[RetrieverMode] = Field(default_factory=list)
    limit: int | None = Field(None, ge=1, description="Only the first N questions of each dataset.")
    answer_limit: int | None = Field(
        None,
        ge=1,
        description="Answer only the first N answerable questions of each dataset (unanswerable ones, "
        "mostly refused before the LLM, are all asked); None: all.",
    )
    out: Path = Field(DEFAULT_OUT, description="Output directory: store, cache, report.")
    store: Path | None = Field(
        None,
        description="Eval store directory shared by runs (a collection per corpus file; the ingest of a "
        "corpus it already holds adds nothing); None: `out`/store.",
    )
    preset: str | None = None

    @field_validator("retrievers", "answer_retrievers")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(v))

    @property
    def ks(self) -> list[int]:
        """Cut-offs of hit@k and recall@k that the retrieval depth allows."""
        return [k for k in (1, 5, 10, 100) if k <= self.depth]


def _shared(*parts: str) -> str:
    return str(SHARED_DIR.joinpath(*parts))


def preset(name: str) -> dict[str, Any]:
    """Fields of a named run: 'dev' (full corpus, dev sets, retrieval) or 'ci' (seed corpus, answers)."""
    from rag.ingest.corpus import seed_path

    presets: dict[str, dict[str, Any]] = {
        "dev": {
            "corpus": _shared("data", "iclr2025", "papers.jsonl"),
            "datasets": [
                _shared("evalsets", "topics_dev.jsonl"),
                _shared("evalsets", "descriptions_dev.jsonl"),
                "authors",
                "named",
                "similar",
                "unanswerable",
            ],
            "retrievers": list(RETRIEVERS),
            "depth": 100,
            "answers": False,
            "out": "reports/eval-dev",
        },
        "ci": {
            "corpus": str(seed_path()),
            "datasets": ["seed_qa", "unanswerable"],
            "retrievers": list(RETRIEVERS),
            "depth": 10,
            "answers": True,
            # Keeps the CI run under 5 minutes on 2 shared cores; --answer-limit 0 answers all 22.
            "answer_limit": 6,
            "out": "reports/eval-ci",
        },
        "answers": {
            "corpus": _shared("data", "iclr2025", "papers.jsonl"),
            "datasets": [
                "seed_qa",
                "short_qa",
                "unanswerable",
                "unanswerable_more",
                _shared("evalsets", "topics_dev.jsonl"),
                _shared("evalsets", "descriptions_dev.jsonl"),
            ],
            "retrievers": list(RETRIEVERS),
            "depth": 100,
            "answers": True,
            "out": "reports/eval-answers",
        },
    }
    if name not in presets:
        raise EvalError(f"unknown preset {name!r}; use one of {', '.join(presets)}")
    return {**presets[name], "preset": name}


def parse_retrievers(text: str) -> list[str]:
    """'dense,bm25' → ['dense', 'bm25'], rejecting unknown names."""
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in RETRIEVERS]
    if bad or not names:
        raise EvalError(f"unknown retriever {bad[0] if bad else text!r}; use {', '.join(RETRIEVERS)}")
    return names


def fingerprint(obj: Any) -> str:
    """Short stable hash of a JSON-able object (configuration identity for the cache)."""
    blob = json.dumps(obj, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


def model_settings(settings: Settings, model: ModelRecord | None = None) -> dict[str, Any]:
    """The parts of the core settings that change retrieval or answers (no secrets, no store path);
    `model` is the embedding model the store names (an adapted one has its own fingerprint)."""
    llm = settings.llm
    return {
        "embedding_model": f"{model.name} ({model.fingerprint})" if model else
        str(settings.embedding.model_path or "bundled all-MiniLM-L6-v2"),
        "ingest": settings.ingest.model_dump(mode="json"),
        "retrieval": settings.retrieval.model_dump(mode="json"),
        "answer": settings.answer.model_dump(mode="json"),
        "llm": {
            "name": llm.display_name,
            "n_ctx": llm.n_ctx,
            "max_tokens": llm.max_tokens,
            "temperature": llm.temperature,
        },
    }
