"""Shared fixtures: every test writes under tmp_path, and nothing may leave the machine."""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# The team's data folder beside the repository (the 2,115-paper corpus and the dev sets). A clone
# without it still runs every test that does not need it; the others are skipped with how to get it.
SHARED = REPO.parent / "shared"
DATA = SHARED / "data"
EVALSETS = SHARED / "evalsets"
FULL_CORPUS = DATA / "iclr2025" / "papers.jsonl"
SHARED_SEED = DATA / "seed" / "papers.jsonl"
SEED_CORPUS = REPO / "rag" / "data" / "seed_papers.jsonl"  # the 19 papers ship inside the package (rag.ingest.corpus.seed_path)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="mpl-"))  # not the user's home
os.environ.pop("OPENAI_API_KEY", None)
os.environ.pop("OPENAI_BASE_URL", None)
_NO_SKIPS = os.environ.get("RAG_TEST_NO_SKIPS") == "1"
for _k in list(os.environ):
    if _k.startswith("RAG_") and _k != "RAG_TEST_FULL_STORE":
        del os.environ[_k]


def _is_local(address: object) -> bool:
    if not isinstance(address, tuple) or not address:
        return True  # unix sockets and the like
    host = str(address[0])
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False  # a hostname that is not localhost


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any connection to a non-loopback address (e.g. a silent fallback to OpenAI)."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def connect(self: socket.socket, address: object) -> object:
        if not _is_local(address):
            raise RuntimeError(f"test tried to reach the network: {address}")
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: object) -> object:
        if not _is_local(address):
            raise RuntimeError(f"test tried to reach the network: {address}")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Default store under the test's tmp dir, never the repository's vectorstore/."""
    monkeypatch.setenv("RAG_STORE__PATH", str(tmp_path / "chroma"))


def need(path: Path) -> Path:
    """The shared data file or folder, or a skip that says how to get it (CI has it and fails on any skip)."""
    if not path.exists():
        pytest.skip(f"needs {path}: the data folder beside the clone (../shared: the 2,115 ICLR 2025 papers "
                    "and the dev sets; README, 'Tests and benchmarks')")
    return path


_skipped: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """RAG_TEST_NO_SKIPS=1 (set by .ci/run, which has every component and the shared data): a skipped
    test fails the run, so CI runs every test."""
    if _NO_SKIPS and _skipped:
        print(f"\nRAG_TEST_NO_SKIPS: {len(_skipped)} test(s) skipped, e.g. {_skipped[0]}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def full_corpus() -> Path:
    return need(FULL_CORPUS)


@pytest.fixture(scope="session")
def evalsets() -> Path:
    return need(EVALSETS)


@pytest.fixture(scope="session")
def seed_rag(tmp_path_factory: pytest.TempPathFactory):
    """A RAG over the built-in 19 papers (auto-seeded), shared by the session's tests."""
    from rag import RAG, Settings

    settings = Settings(store={"path": tmp_path_factory.mktemp("seed") / "chroma"})
    rag = RAG(settings)
    assert rag.stats()["papers"] == 19
    return rag


@pytest.fixture(scope="session")
def full_rag(tmp_path_factory: pytest.TempPathFactory, full_corpus: Path):
    """A RAG over the 2,115-paper corpus (ingested once per session). RAG_TEST_FULL_STORE may name a
    store that already holds it (a copy is used, and the ingest then only checks it)."""
    import os
    import shutil

    from rag import RAG, Settings

    path = tmp_path_factory.mktemp("full") / "chroma"
    if os.environ.get("RAG_TEST_FULL_STORE"):
        shutil.copytree(os.environ["RAG_TEST_FULL_STORE"], path)
    settings = Settings(store={"path": path, "auto_seed": False})
    rag = RAG(settings)
    rag.ingest([full_corpus], progress=False)
    return rag


@pytest.fixture
def fake_rag(seed_rag):
    """`fake_rag(replies, **groups)`: a RAG over the seed store whose LLM is a `ScriptedLLM` (see
    tests/fakes.py) replaying `replies`; answers are generative unless `answer={"mode": ...}` says
    otherwise, and follow-ups are condensed by the LLM unless `answer={"condense": ...}` says
    otherwise. It shares the seed store and embedding model read-only; `rag.llm.calls` shows what the
    LLM received."""
    from .fakes import ScriptedLLM, rag_with_llm

    def make(replies=(), *, delay: float = 0.0, piece_chars: int = 4, **groups):
        # The fake stands in for a model worth asking to condense (the local model's default is the rules).
        groups["answer"] = {"mode": "generative", "condense": "llm", "cache_size": 0, **groups.get("answer", {})}
        return rag_with_llm(seed_rag, ScriptedLLM(replies, delay=delay, piece_chars=piece_chars), **groups)

    return make


# -- a seeded store per test (store processes, paper table) ------------------------------------
def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding the 19 seed papers, copied for each test."""
    from rag import RAG, Settings

    path = tmp_path_factory.mktemp("seeded") / "chroma"
    assert RAG(Settings(store={"path": path})).stats()["papers"] == 19
    return path


@pytest.fixture
def store(seeded: Path, tmp_path: Path) -> Path:
    path = tmp_path / "chroma"
    shutil.copytree(seeded, path)
    return path
