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


# -- the 2,115-paper store, ingested in the background while the other tests run ------------------
_FULL: dict[str, object] = {}  # "proc": the ingest process, "dir": its folder, "log": its output


def pytest_collection_finish(session: pytest.Session) -> None:
    """When selected tests need the 2,115-paper store, a separate process ingests it on one core
    from the start of the session, and the modules that use it run last (each module whole, in its
    own order), so its minutes of embedding overlap the other tests instead of adding to them; the
    first test that needs it waits for it. RAG_TEST_FULL_STORE (a store that already holds it) makes
    this unnecessary."""
    items = session.items

    def module(it: pytest.Item) -> str:
        return str(getattr(getattr(it, "module", None), "__name__", ""))

    full_modules = {module(it) for it in items if "full_rag" in getattr(it, "fixturenames", ())}
    if not full_modules or os.environ.get("RAG_TEST_FULL_STORE") or not FULL_CORPUS.is_file():
        return
    items.sort(key=lambda it: module(it) in full_modules)
    import subprocess
    import sys

    folder = Path(tempfile.mkdtemp(prefix="rag-full-store-"))
    log = (folder / "ingest.log").open("w", encoding="utf-8")
    one_core = {k: "1" for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    env = {**os.environ, **one_core, "RAG_STORE__PATH": str(folder / "chroma"), "RAG_STORE__AUTO_SEED": "false"}
    _FULL.update(dir=folder, log=log, proc=subprocess.Popen(
        [sys.executable, "-c", "from rag.cli import main; main()", "ingest", "--no-progress", str(FULL_CORPUS)],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=REPO,
    ))


def _full_store() -> Path | None:
    """The background ingest's store once it has finished (None when there is none)."""
    import subprocess

    proc = _FULL.get("proc")
    if not isinstance(proc, subprocess.Popen):
        return None
    code = proc.wait()
    folder = Path(str(_FULL["dir"]))
    if code != 0:
        tail = (folder / "ingest.log").read_text(encoding="utf-8", errors="replace")[-2000:]
        pytest.fail(f"the background ingest of {FULL_CORPUS} failed (exit {code}):\n{tail}")
    return folder / "chroma"


def _stop_full_store() -> None:
    import subprocess

    proc = _FULL.get("proc")
    if isinstance(proc, subprocess.Popen):
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log = _FULL.get("log")
        if hasattr(log, "close"):
            log.close()
        shutil.rmtree(str(_FULL["dir"]), ignore_errors=True)
    _FULL.clear()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """RAG_TEST_NO_SKIPS=1 (set by .ci/run, which has every component and the shared data): a skipped
    test fails the run, so CI runs every test."""
    _stop_full_store()
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
    """A RAG over the 2,115-paper corpus (ingested once per session, in the background from its start:
    `pytest_collection_finish`). RAG_TEST_FULL_STORE may name a
    store that already holds it (a copy is used, and the ingest then only checks it)."""
    import os
    import shutil

    from rag import RAG, Settings

    path = tmp_path_factory.mktemp("full") / "chroma"
    if os.environ.get("RAG_TEST_FULL_STORE"):
        shutil.copytree(os.environ["RAG_TEST_FULL_STORE"], path)
    else:
        path = _full_store() or path  # ingested in the background since the session started
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
