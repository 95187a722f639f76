"""Several processes on one store (issue 10, "no process sees a stale store").

A running RAG sees another process's removals and ingests without a restart (dense and BM25); writers
take turns on an embedded store or report it busy; a read-only store and a full disk give one clean
`error:` line and lose nothing. Real embedded Chroma in tmp dirs, real embeddings, real
`python -m rag.cli` subprocesses with RAG_STORE__PATH.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from rag import RAG, Settings
from rag.models.adapt import AdaptConfig
from rag.store.chroma import REVISION_FILE, PaperStore, StoreBusyError

from .conftest import FULL_CORPUS, REPO, SEED_CORPUS, need, write_jsonl

SEED = [json.loads(line) for line in SEED_CORPUS.read_text(encoding="utf-8").splitlines()]


def _new_papers(n: int, skip: int = 0) -> list[dict]:
    """Papers of the full corpus that are not in the seed corpus."""
    seed_ids = {p["id"] for p in SEED}
    out: list[dict] = []
    with need(FULL_CORPUS).open(encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec["id"] not in seed_ids:
                out.append(rec)
            if len(out) >= skip + n:
                break
    return out[skip:]


def _rag(store: Path) -> RAG:
    return RAG(Settings(store={"path": store, "auto_seed": False}))


def _env(store: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update(RAG_STORE__PATH=str(store), RAG_STORE__AUTO_SEED="false", HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env.update(extra)
    return env


def _rag_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "rag.cli", *args]


def _run(store: Path, *args: str, prefix: tuple[str, ...] = (), preexec: Any = None,
         **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, *_rag_cli(*args)], cwd=REPO, env=_env(store, **env), capture_output=True,
                          text=True, timeout=900, preexec_fn=preexec)


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The command failed, printing exactly one `error: ...` line and no traceback."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr[-3000:]
    return errors[0]


def _snapshot(store: Path) -> list[tuple[str, str, str | None]]:
    paper_store = PaperStore(Settings(store={"path": store}).store)
    paper_store.sync()
    return sorted((cid, json.dumps(meta, sort_keys=True), doc)
                  for cid, meta, doc in paper_store.iter_records(["metadatas", "documents"]))


def _consistent_papers(store: Path) -> set[str]:
    """The store's papers, after checking each has exactly its chunks of one version."""
    paper_store = PaperStore(Settings(store={"path": store}).store)
    paper_store.sync()
    manifest = paper_store.manifest()
    for pid, entry in manifest.items():
        assert len(entry.hashes) == 1 and len(entry.chunk_ids) == entry.expected_chunks, pid
        assert len(set(entry.chunk_ids)) == len(entry.chunk_ids), pid
    return set(manifest)


def _found(rag: RAG, query: str, mode: str, top_k: int = 5) -> list[str]:
    return [s.paper_id for s in rag.retrieve(query, top_k=top_k, retriever=mode).sources]  # type: ignore[arg-type]


class _Reader:
    """Collects a subprocess's stderr as it comes (so a test can wait for a line)."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        self.chunks: list[bytes] = []
        assert proc.stderr is not None
        fd = proc.stderr.fileno()
        self.thread = threading.Thread(
            target=lambda: [self.chunks.append(b) for b in iter(lambda: os.read(fd, 4096), b"")], daemon=True
        )
        self.thread.start()

    @property
    def text(self) -> str:
        return b"".join(self.chunks).decode(errors="replace")

    def wait_for(self, needle: str, proc: subprocess.Popen[bytes], seconds: float = 600) -> None:
        deadline = time.time() + seconds
        while needle not in self.text:
            assert proc.poll() is None, f"ended before printing {needle!r}:\n{self.text[-3000:]}"
            assert time.time() < deadline, f"no {needle!r} after {seconds}s:\n{self.text[-3000:]}"
            time.sleep(0.1)


class _CliProcess:
    """Process B: one Python process that runs `rag` commands sent to it one at a time, each through
    `rag.cli.main` as `python -m rag.cli` runs it (one process start for several commands)."""

    CODE = ("import json, sys\nfrom rag.cli import main\nfor line in sys.stdin:\n"
            "    rc = main(json.loads(line))\n    print('\\n' + json.dumps({'rc': rc}), flush=True)\n")

    def __init__(self, store: Path, log: Path):
        self.log = log.open("wb")
        self.proc = subprocess.Popen([sys.executable, "-c", self.CODE], cwd=REPO, env=_env(store), text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)

    def run(self, *args: str) -> tuple[int, str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(list(args)) + "\n")
        self.proc.stdin.flush()
        out = []
        for line in self.proc.stdout:
            if line.startswith('{"rc": '):
                return json.loads(line)["rc"], "".join(out)
            out.append(line)
        raise AssertionError(f"process B ended: {Path(self.log.name).read_text()[-3000:]}")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.log.close()


# -- a running process sees the others' writes --------------------------------------------------------
@pytest.mark.slow
def test_a_running_rag_sees_another_process_remove_and_ingest_without_restart(store: Path, tmp_path: Path) -> None:
    other = _CliProcess(store, tmp_path / "b.log")  # process B (starts while A loads)
    try:
        _remove_and_ingest_in_b(_rag(store), other, tmp_path)  # process A: this one, kept running
    finally:
        other.close()


def _remove_and_ingest_in_b(rag: RAG, other: _CliProcess, tmp_path: Path) -> None:
    gone, changed, new = SEED[0], SEED[1], _new_papers(1)[0]
    for mode in ("dense", "bm25"):
        assert gone["id"] in _found(rag, gone["title"], mode)
        assert new["id"] not in _found(rag, new["title"], mode)
    title_vector = rag.embed_model.get_query_embedding(gone["title"])

    rc, out = other.run("remove", gone["id"])
    assert rc == 0 and f"removed {gone['id']}" in out
    for mode in ("dense", "bm25", "hybrid"):
        assert gone["id"] not in _found(rag, gone["title"], mode, top_k=10), mode
    # Not in the raw vector search either: a client that was not reopened still returns its chunks.
    assert gone["id"] not in {pid for pid, _ in rag.store.nearest_chunks(title_vector, 100)}

    rewritten = dict(changed, abstract="We steer zeppelins through quasicrystal lattices of warm air. "
                                       "Zeppelin pilots learn quasicrystal routes from few examples.")
    rc, out = other.run("ingest", "--no-progress", str(write_jsonl(tmp_path / "b.jsonl", [new, rewritten])))
    assert rc == 0 and "added 1, updated 1" in out
    for mode in ("dense", "bm25"):
        assert _found(rag, new["title"], mode)[0] == new["id"], mode
    assert _found(rag, "zeppelin quasicrystal routes", "bm25")[0] == changed["id"]
    source = next(s for s in rag.retrieve(changed["title"], top_k=3).sources if s.paper_id == changed["id"])
    assert source.text == rewritten["abstract"]


def test_two_rags_in_one_process_see_each_others_writes_without_reopening(store: Path) -> None:
    a, b = _rag(store), _rag(store)
    x = SEED[2]
    assert x["id"] in _found(a, x["title"], "bm25")
    generation = a.store._conn.generation
    b.remove(x["id"])
    assert x["id"] not in _found(a, x["title"], "bm25", top_k=10)
    assert x["id"] not in _found(a, x["title"], "dense", top_k=10)
    assert a.store._conn.generation == generation  # this process's own write: its client is current


@pytest.mark.slow
def test_a_running_rag_follows_the_model_another_writer_adapted_the_store_to(store: Path) -> None:
    reader, writer = _rag(store), _rag(store)
    reader.retrieve("synthetic data", top_k=3)
    assert reader._model_record is not None and reader._model_record.name == "bundled"
    writer.adapt(AdaptConfig(epochs=1, batch_size=8, learning_rate=5e-5), progress=False)
    first = SEED[3]
    assert _found(reader, first["title"], "dense")[0] == first["id"]
    assert reader._model_record == writer._model_record and reader._model_record.name == "adapted"
    assert reader.retriever.embed_model is reader._embed


# -- writers take turns ------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_second_writer_waits_or_reports_the_store_busy(store: Path, tmp_path: Path) -> None:
    first, second = _new_papers(2)
    holder = PaperStore(Settings(store={"path": store}).store)
    lock = holder.writing()
    lock.__enter__()  # this process writes (as long as the test says)
    try:
        impatient = subprocess.Popen(_rag_cli("ingest", "--no-progress", str(write_jsonl(tmp_path / "a.jsonl", [first]))),
                                     cwd=REPO, env=_env(store, RAG_STORE__LOCK_TIMEOUT="1"),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        patient = subprocess.Popen(_rag_cli("ingest", "--no-progress", str(write_jsonl(tmp_path / "b.jsonl", [second]))),
                                   cwd=REPO, env=_env(store, RAG_STORE__LOCK_TIMEOUT="600"),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        waiting = _Reader(patient)
        out, err = impatient.communicate(timeout=900)
        waiting.wait_for("is writing to", patient)  # it waits for the lock this process holds
    finally:
        lock.__exit__(None, None, None)
    assert patient.wait(timeout=900) == 0, waiting.text[-3000:]
    waiting.thread.join(timeout=10)
    assert f"another process (pid {os.getpid()}) is writing to {store}: waiting up to 600s" in waiting.text

    line = _one_error_line(subprocess.CompletedProcess(impatient.args, impatient.returncode, out.decode(),
                                                       err.decode()))
    assert line == (f"error: store busy: another process (pid {os.getpid()}) is writing to {store}; "
                    "try again when it finishes (waited 1s, RAG_STORE__LOCK_TIMEOUT)")
    assert _consistent_papers(store) == {p["id"] for p in SEED} | {second["id"]}


@pytest.mark.slow
def test_two_writers_at_once_both_finish_and_the_store_is_consistent(store: Path, tmp_path: Path) -> None:
    batches = [_new_papers(6), _new_papers(6, skip=6)]
    procs = [subprocess.Popen(_rag_cli("ingest", "--no-progress", str(write_jsonl(tmp_path / f"{i}.jsonl", papers))),
                              cwd=REPO, env=_env(store, RAG_STORE__LOCK_TIMEOUT="600"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for i, papers in enumerate(batches)]
    outs = [p.communicate(timeout=900) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0 and b"added 6" in out, err.decode()[-3000:]
    expected = {p["id"] for p in SEED} | {p["id"] for batch in batches for p in batch}
    assert _consistent_papers(store) == expected
    rag = _rag(store)
    for papers in batches:
        assert _found(rag, papers[0]["title"], "dense")[0] == papers[0]["id"]


def test_in_process_writers_take_turns_too(store: Path) -> None:
    a, b = PaperStore(Settings(store={"path": store}).store), PaperStore(
        Settings(store={"path": store, "lock_timeout": 0.2}).store)
    with a.writing():
        with b.writing():  # the same thread: the lock is reentrant
            pass
        failed: list[BaseException] = []
        other = threading.Thread(target=lambda: _capture(failed, b.remove_paper, SEED[0]["id"]))
        other.start()
        other.join()
    assert len(failed) == 1 and isinstance(failed[0], StoreBusyError)
    assert "another thread of this process" in str(failed[0])
    assert b.remove_paper(SEED[0]["id"]) > 0  # free again


def _capture(errors: list[BaseException], fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except BaseException as exc:  # noqa: BLE001 - handed to the test
        errors.append(exc)


# -- bad disks ---------------------------------------------------------------------------------------
def test_a_read_only_store_gives_one_error_line_and_stays_as_it_was(store: Path, tmp_path: Path) -> None:
    corpus = write_jsonl(tmp_path / "new.jsonl", _new_papers(3))
    before = _snapshot(store)
    prefix: tuple[str, ...] = ()
    modes: dict[Path, int] = {}
    if os.geteuid() == 0:  # root writes through file modes: mount the store read-only for the subprocess
        prefix = ("unshare", "--mount", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"', str(store))
        probe = subprocess.run([*prefix, "touch", str(store / "probe")], capture_output=True, text=True)
        if "Read-only file system" not in probe.stderr:
            pytest.skip(f"running as root and cannot make a read-only mount here: {probe.stderr.strip()}")
    else:
        for p in [store, *store.rglob("*")]:
            modes[p] = p.stat().st_mode
            p.chmod(modes[p] & ~0o222)
    try:
        proc = _run(store, "ingest", "--no-progress", str(corpus), prefix=prefix)
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
    line = _one_error_line(proc)
    assert line.startswith(f"error: the store at {store} is read-only"), line
    assert _snapshot(store) == before


@pytest.mark.slow
def test_a_full_disk_gives_one_error_line_and_loses_nothing(store: Path, tmp_path: Path) -> None:
    papers = _new_papers(20)  # more than the ~19 free pages of the seeded store's database hold
    corpus = write_jsonl(tmp_path / "new.jsonl", papers)
    before = _snapshot(store)
    limit = max(p.stat().st_size for p in store.rglob("*") if p.is_file())

    def no_room() -> None:  # in the child: no file may grow past the store's largest file
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = _run(store, "ingest", "--no-progress", str(corpus), preexec=no_room)
    line = _one_error_line(proc)
    assert line.startswith(f"error: cannot write to the store at {store} (writing chunks): "), line
    assert "is the disk full" in line
    assert _snapshot(store) == before
    rag = _rag(store)  # the vector index lost nothing either
    for paper in SEED[:6]:
        assert _found(rag, paper["title"], "dense", top_k=1) == [paper["id"]]
    report = rag.ingest([corpus], progress=False)  # with room again, the same ingest goes through
    assert (report.added, report.unchanged) == (20, 0)
    assert _consistent_papers(store) == {p["id"] for p in SEED} | {p["id"] for p in papers}


# -- the cost of looking ------------------------------------------------------------------------------
def test_the_per_query_store_check_is_cheap(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rag = _rag(store)
    rag.retrieve("diffusion models", top_k=5)
    paper_store = rag.store
    generation = paper_store._conn.generation

    def per_call(fn: Any, n: int) -> float:
        fn()
        start = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - start) / n

    sync = per_call(paper_store.sync, 1000)
    revision = per_call(paper_store._conn.read_revision, 5000)
    count = per_call(paper_store.count_chunks, 1000)
    query = per_call(lambda: rag.retrieve("diffusion models for protein design", top_k=5), 30)
    with capsys.disabled():
        print(f"\n[store check per query] sync(): {sync * 1e6:.0f} µs = revision file read "
              f"{revision * 1e6:.1f} µs + chunk count {count * 1e6:.0f} µs (the count was taken per query "
              f"before this change too); a hybrid retrieval: {query * 1e3:.1f} ms")
    assert paper_store._conn.generation == generation  # nothing changed: never reopened
    assert paper_store.sync() == paper_store.sync()
    assert (store / REVISION_FILE).read_text().strip() == paper_store.sync().revision


# -- a running server -------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_running_server_stops_citing_a_paper_removed_by_another_process_and_finds_new_ones(
    store: Path, tmp_path: Path
) -> None:
    """Issue 10's report: after `rag remove X` in another process, a running `rag serve` kept citing X,
    and new papers needed a restart. Real `rag serve` and real `rag remove`/`rag ingest` processes."""
    import httpx

    from .servers import rag_serve

    gone, new = SEED[4], _new_papers(1, skip=3)[0]

    def cited(base: str, title: str, retriever: str) -> list[str]:
        body = {"question": title, "top_k": 10, "retriever": retriever}
        resp = httpx.post(f"{base}/api/ask", json=body, timeout=120)
        assert resp.status_code == 200, resp.text
        return [s["paper_id"] for s in resp.json()["sources"]]

    with rag_serve(tmp_path / "serve.log", _env(store), "--no-ui") as (base, _server):
        for mode in ("dense", "bm25"):
            assert gone["id"] in cited(base, gone["title"], mode)
        assert _run(store, "remove", gone["id"]).returncode == 0
        for mode in ("dense", "bm25", "hybrid"):
            assert gone["id"] not in cited(base, gone["title"], mode), mode
        assert httpx.get(f"{base}/healthz", timeout=10).json()["papers"] == 18

        added = _run(store, "ingest", "--no-progress", str(write_jsonl(tmp_path / "new.jsonl", [new])))
        assert added.returncode == 0, added.stderr
        for mode in ("dense", "bm25"):
            assert cited(base, new["title"], mode)[0] == new["id"], mode
        assert httpx.get(f"{base}/healthz", timeout=10).json()["papers"] == 19
