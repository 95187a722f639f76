"""Hardening (issue 10): no secrets or paths leave the server, bad corpus files fail with one line,
terminal output carries no control sequences, only http(s) links are shown, absurd markers in a
history are harmless, and a client that goes away stops its generation and frees its slot."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from rag import RAG, Settings
from rag.errors import CorpusError, public_text, redact_secrets
from rag.ingest.corpus import LoadReport, Paper, load_papers
from rag.queue import GenerationQueue
from rag.serve import ServerSettings, running
from rag.settings import LLMSettings

from .fakes import rag_with_llm
from .servers import free_port, rag_serve

ON_TOPIC = "Which paper proposes a lifelong learning agent for formal theorem proving?"
OFF_TOPIC = "What is the capital of France?"
SECRETS = ("pa55word", "s3cret-key", "alice:", "/v1", "?key")


def rag_cli(*args: str, env: dict | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rag.cli", "--log-level", "WARNING", *args],
        env={**os.environ, **(env or {})}, input=stdin, capture_output=True, text=True, timeout=600,
    )


def no_secrets(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, (secret, text)


# -- no secrets or internal paths in output -----------------------------------------------------
def test_urls_and_paths_are_cut_for_the_public_and_secrets_masked_everywhere() -> None:
    url = "http://alice:pa55word@llm.example:8080/v1?key=s3cret-key"
    assert LLMSettings(base_url=url, model="m").display_name == "m @ http://llm.example:8080"
    message = f"cannot reach {url} (see /home/alice/iclr/vectorstore/chroma); Authorization: Bearer s3cret-key"
    assert public_text(message) == (
        "cannot reach http://llm.example:8080 (see …/chroma); Authorization: Bearer ***"
    )
    assert redact_secrets(message) == (  # logs and the local terminal keep paths, never secrets
        "cannot reach http://llm.example:8080/v1 (see /home/alice/iclr/vectorstore/chroma); "
        "Authorization: Bearer ***"
    )
    from rag.models.llm import unavailable

    err = unavailable(LLMSettings(base_url=url, model="m"), ConnectionError(f"refused: {url}"))
    assert "http://llm.example:8080/v1" in str(err) and "pa55word" not in str(err) and "s3cret" not in str(err)


def test_server_shows_no_credentials_endpoint_path_or_store_path(
    seed_rag: RAG, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"http://alice:pa55word@127.0.0.1:{free_port()}/v1?key=s3cret-key"  # nothing listens there
    llm = {"base_url": url, "model": "m", "max_retries": 0, "timeout": 5}
    rag = rag_with_llm(seed_rag, None, retrieval={"top_k": 2}, llm=llm)
    store = tmp_path / "private-store"
    store.write_text("a file where the store's directory should be")
    broken_store = RAG(Settings(store={"path": store, "auto_seed": False}))
    missing_model = rag_with_llm(
        seed_rag, None, answer={"mode": "generative"}, llm={"model_path": tmp_path / "models" / "gone.gguf"}
    )
    bodies: list[str] = []
    with running(rag, ServerSettings(port=0, ui=False)) as srv, httpx.Client(base_url=srv.url, timeout=60) as http:
        health = http.get("/healthz").json()
        assert health["llm"] == f"m @ http://127.0.0.1:{url.split(':')[3].split('/')[0]}"
        refused = http.post("/api/ask", json={"question": OFF_TOPIC})
        assert refused.json()["refused"] and refused.json()["llm"] == health["llm"]
        failed = http.post("/api/ask", json={"question": ON_TOPIC})
        assert failed.status_code == 503 and failed.json()["error"]["type"] == "llm_unavailable"
        streamed = http.post("/api/ask/stream", json={"question": ON_TOPIC})
        assert "event: error" in streamed.text
        compat = http.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": ON_TOPIC}]})
        assert compat.status_code == 503
        bodies += [json.dumps(health), refused.text, failed.text, streamed.text, compat.text]
    with running(broken_store, ServerSettings(port=0, ui=False)) as srv, httpx.Client(base_url=srv.url) as http:
        for resp in (http.get("/healthz"), http.post("/api/ask", json={"question": ON_TOPIC})):
            assert resp.status_code == 503 and resp.json()["error"]["type"] == "store_unavailable", resp.text
            bodies.append(resp.text)
    with running(missing_model, ServerSettings(port=0, ui=False)) as srv, httpx.Client(base_url=srv.url) as http:
        resp = http.post("/api/ask", json={"question": ON_TOPIC})
        assert resp.status_code == 503 and resp.json()["error"]["type"] == "config_error", resp.text
        bodies.append(resp.text)
    for body in bodies:
        no_secrets(body)
        assert str(tmp_path) not in body and "private-store" not in body and "/models/" not in body, body
    for secret in ("pa55word", "s3cret-key", "alice:", "?key"):  # the log names the endpoint, never its
        assert secret not in caplog.text, secret  # credentials


# -- bad corpus files: one line naming file and line, and the store as it was --------------------
GOOD = {"id": "good-1", "title": "A good paper", "abstract": "It is a fine abstract about graphs."}
NEW = {"id": "new-1", "title": "A new paper", "abstract": "Another fine abstract about trees."}


def _jsonl(*records: object) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


BAD_FILES: dict[str, tuple[str, bytes, int | None, str]] = {
    # name: (file name, content, line, message start)
    "csv cell over 128 KB": (
        "big-cell.csv", b'id,title,abstract\ngood-1,T,ok\nb-2,T2,"' + b"x" * 200_000 + b'"\n', 3,
        "invalid CSV (field larger than field limit",
    ),
    "deeply nested JSON line": (
        "nested.jsonl", (_jsonl(GOOD) + "[" * 100_000 + "]" * 100_000 + "\n").encode(), 2,
        "invalid record (JSON nested too deeply)",
    ),
    "deeply nested JSON array": (
        "nested.json", ("[" + "[" * 100_000 + "]" * 100_000 + "]").encode(), None,
        "invalid record (JSON nested too deeply)",
    ),
    "invalid UTF-8": ("latin1.jsonl", _jsonl(GOOD, GOOD).encode() + b'{"title": "Caf\xe9"}\n', 3, "not UTF-8 text"),
    "invalid UTF-8 in a CSV": ("latin1.csv", b"id,title,abstract\nx,Caf\xe9,abc\n", 2, "not UTF-8 text"),
    "a huge line": (
        "huge.jsonl", (_jsonl(GOOD) + json.dumps({"title": "t", "abstract": "y" * 3_000_000}) + "\n").encode(), 2,
        "line longer than 1048576 bytes",
    ),
    "a directory": ("folder.jsonl", b"", None, "is a directory, not a corpus file"),
}


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a store that holds one paper (written by `rag ingest`)."""
    root = tmp_path_factory.mktemp("ingest")
    env = {"RAG_STORE__PATH": str(root / "chroma"), "RAG_STORE__AUTO_SEED": "false"}
    good = root / "good.jsonl"
    good.write_text(_jsonl(GOOD))
    out = rag_cli("ingest", "--no-progress", str(good), env=env)
    assert out.returncode == 0, out.stderr
    return env


def _counts(env: dict[str, str]) -> tuple[int, int]:
    out = rag_cli("stats", "--json", env=env)
    assert out.returncode == 0, out.stderr
    stats = json.loads(out.stdout)
    return stats["papers"], stats["chunks"]


@pytest.mark.slow
@pytest.mark.parametrize("case", list(BAD_FILES))
def test_a_bad_corpus_file_is_one_clean_line_and_the_store_is_unchanged(
    case: str, ingested: dict[str, str], tmp_path: Path
) -> None:
    name, content, line, message = BAD_FILES[case]
    path = tmp_path / name
    if case == "a directory":
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(CorpusError) as info:
        load_papers(path)
    assert (info.value.path, info.value.line) == (str(path), line)

    before = _counts(ingested)
    new = tmp_path / "new.jsonl"
    new.write_text(_jsonl(NEW))
    out = rag_cli("ingest", "--no-progress", str(new), str(path), env=ingested)  # a good file, then the bad
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith(f"error: {where}{message}"), out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr
    assert _counts(ingested) == before  # nothing of the input was written, not even the good file


# -- terminal output carries no control sequences ---------------------------------------------
EVIL_TITLE = "Quantum Banana Sorting Networks\x1b]0;pwned\x07"
EVIL = {
    "id": "evil-1",
    "title": EVIL_TITLE,
    "abstract": "We propose quantum banana sorting networks that sort bananas by ripeness.\x1b[2J "
    "Quantum banana sorting networks sort ten thousand bananas per second.\r\x9b31m",
    "authors": ["Mallory\x1b[5m"],
}


@pytest.mark.slow
def test_cli_output_shows_control_characters_instead_of_sending_them(tmp_path: Path) -> None:
    env = {"RAG_STORE__PATH": str(tmp_path / "chroma"), "RAG_STORE__AUTO_SEED": "false"}
    corpus = tmp_path / "evil.jsonl"
    corpus.write_text(_jsonl(EVIL))
    assert rag_cli("ingest", "--no-progress", str(corpus), env=env).returncode == 0
    question = "Which paper proposes quantum banana sorting networks?"
    outputs = {
        "ask": rag_cli("ask", question, env=env),
        "ask --json": rag_cli("ask", "--json", question, env=env),
        "chat": rag_cli("chat", env=env, stdin=question + "\n"),
        "stats": rag_cli("stats", env=env),
        "error": rag_cli("ingest", str(tmp_path / "gone\x1b[2J.jsonl"), env=env),
    }
    for name, out in outputs.items():
        for stream in (out.stdout, out.stderr):
            assert not any(c in stream for c in "\x1b\x07\x9b\r"), (name, stream)
    ask = outputs["ask"]
    assert ask.returncode == 0 and "Quantum Banana Sorting Networks\\u001b]0;pwned\\u0007" in ask.stdout, ask.stdout
    assert "\\u001b[2J" in ask.stdout  # shown, visibly, where the abstract had it
    answer = json.loads(outputs["ask --json"].stdout)  # still JSON, with the same text
    assert answer["citations"][0]["title"] == EVIL_TITLE
    assert "Quantum Banana" in outputs["chat"].stdout
    assert outputs["error"].returncode == 1 and "gone\\u001b[2J.jsonl: file not found" in outputs["error"].stderr


def test_print_answer_escapes_every_field() -> None:
    from rag.cli import print_answer
    from rag.types import Answer, Citation

    answer = Answer(
        question="q",
        text="Sorted [1].\x1b[2J\rDone\u202e.",
        citations=[Citation(number=1, paper_id="p", title="T\x1b]0;x\x07\nFake line", url="https://a.org/x",
                            supporting_text="s", score=1, support=1, kind="evidence")],
    )
    out = io.StringIO()
    print_answer(answer, out)
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text and "\u202e" not in text
    assert "Sorted [1].\\u001b[2J\\u000dDone\\u202e." in text
    assert "[1] T\\u001b]0;x\\u0007 Fake line\n      https://a.org/x" in text  # a title stays on its line


# -- only http(s) links ---------------------------------------------------------------------------
def test_api_replies_carry_only_http_links(seed_rag: RAG, tmp_path: Path) -> None:
    rag = RAG(Settings(store={"path": tmp_path / "chroma", "auto_seed": False}, retrieval={"top_k": 3}))
    rag._embed, rag._model_record = seed_rag.embed_model, seed_rag._model_record  # no second model load
    corpus = tmp_path / "links.jsonl"
    corpus.write_text(_jsonl(
        {"title": "Banana sorting networks", "abstract": "We propose banana sorting networks that sort "
         "bananas by ripeness.", "url": "javascript:alert(1)"},
        {"id": "b-2", "title": "Banana sorting networks at scale", "abstract": "Banana sorting networks "
         "sort bananas by ripeness at scale.", "source_url": "JavaScript:alert(document.cookie)"},
        {"id": "b-3", "title": "Ripe banana sorting", "abstract": "Banana sorting networks sort ripe "
         "bananas.", "url": "https://example.org/ripe"},
    ))
    papers = load_papers(corpus).papers
    assert [p.url for p in papers] == ["", "https://openreview.net/forum?id=b-2", "https://example.org/ripe"]
    rag.ingest([corpus], progress=False)
    # A store written before links were checked may still hold one: the answer types drop it too.
    old = Paper(id="b-4", title="Banana sorting networks, the old record", abstract="Banana sorting "
                "networks sort bananas by ripeness, as recorded long ago.", url="javascript:alert(4)")
    rag._ingest_report(LoadReport(papers=[old]), progress=False)
    question = "Which papers propose banana sorting networks?"
    with running(rag, ServerSettings(port=0, ui=False)) as srv, httpx.Client(base_url=srv.url, timeout=120) as http:
        native = http.post("/api/ask", json={"question": question, "top_k": 4})
        stream = http.post("/api/ask/stream", json={"question": question, "top_k": 4})
        body = {"messages": [{"role": "user", "content": question}], "top_k": 4}
        compat = http.post("/v1/chat/completions", json=body)
        compat_stream = http.post("/v1/chat/completions", json={**body, "stream": True})
    answer = native.json()
    assert native.status_code == 200 and len(answer["sources"]) == 4 and answer["citations"], answer
    assert any(s["paper_id"] == "b-4" for s in answer["sources"])
    for resp in (native, stream, compat, compat_stream):
        assert resp.status_code == 200 and "javascript" not in resp.text.lower(), resp.text
    for item in answer["sources"] + answer["citations"]:
        assert item["url"] == "" or item["url"].startswith(("https://", "http://")), item
    assert "**References**" in compat.json()["choices"][0]["message"]["content"]


# -- absurd markers in a history ------------------------------------------------------------------
DIGITS = "9" * 5000
HISTORIES = {
    "marker in the answer": f"LeanAgent proves theorems [{DIGITS}].",
    "reference list head": f"LeanAgent proves theorems [1].\n\n**References**\n\n[{DIGITS}] LeanAgent — https://x.org/a",
    "marker list": f"LeanAgent proves theorems [1, {DIGITS}] and [Source {DIGITS}] and [{DIGITS}-1].",
}


@pytest.mark.parametrize("case", list(HISTORIES))
def test_a_huge_number_in_a_history_marker_is_no_server_error(fake_rag, case: str) -> None:
    condensed = "Which benchmark does LeanAgent use?"
    rag = fake_rag(lambda _messages: condensed, answer={"mode": "evidence"}, retrieval={"top_k": 2})
    history = [{"role": "user", "content": ON_TOPIC}, {"role": "assistant", "content": HISTORIES[case]}]
    follow_up = f"What benchmark does it use? And paper {'9' * 1900}?"[-2000:]  # the question limit
    with running(rag, ServerSettings(port=0, ui=False)) as srv, httpx.Client(base_url=srv.url, timeout=120) as http:
        native = http.post("/api/ask", json={"question": follow_up, "history": history})
        assert native.status_code == 200, native.text
        assert native.json()["standalone_question"] in (condensed, follow_up) or native.json()["text"]
        messages = [*history, {"role": "user", "content": follow_up}]
        compat = http.post("/v1/chat/completions", json={"messages": messages})
        assert compat.status_code == 200, compat.text
        streamed = http.post("/v1/chat/completions", json={"messages": messages, "stream": True})
        assert streamed.status_code == 200 and streamed.text.endswith("data: [DONE]\n\n"), streamed.text[-300:]
        # A citation numbered with 5,000 digits is no JSON number Python reads: a 400, not a 500.
        raw = json.dumps({"question": follow_up, "history": [history[0], {**history[1], "citations": [
            {"number": 0, "paper_id": "p", "title": "t", "supporting_text": "s", "score": 1, "support": 1,
             "kind": "evidence"}]}]}).replace('"number": 0', f'"number": {DIGITS}')
        resp = http.post("/api/ask", content=raw, headers={"content-type": "application/json"})
        assert 400 <= resp.status_code < 500, resp.text




# -- a client that goes away stops the generation ---------------------------------------------------
class WatchedLLM:
    """The real local model, watched: `first_token` is set once its answer stream yields a token and
    `ended` once that stream is over (finished, failed or closed); `tokens` counts what it yielded."""

    def __init__(self, llm: Any):
        self.llm = llm
        self.first_token = threading.Event()
        self.ended = threading.Event()
        self.tokens = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.llm, name)

    def chat(self, *args: Any, **kwargs: Any) -> Any:
        return self.llm.chat(*args, **kwargs)

    def stream_chat(self, messages: Any, **kwargs: Any) -> Any:
        self.first_token.clear()
        self.ended.clear()

        def gen() -> Any:
            try:
                for chunk in self.llm.stream_chat(messages, **kwargs):
                    self.tokens += 1
                    self.first_token.set()
                    yield chunk
            finally:
                self.ended.set()

        return gen()


@pytest.fixture(scope="module")
def local_llm() -> Any:
    """The bundled model in process, allowed long answers (so an unstopped one runs for seconds)."""
    from rag.models.llm import build_llm

    return build_llm(LLMSettings(max_tokens=1024, n_threads=1))  # 1 thread: steady on a busy machine


def _wait_until_free(http: httpx.Client, within: float) -> float:
    start = time.monotonic()
    while http.get("/healthz").json()["queue"]["running"]:
        assert time.monotonic() - start < within, "the slot is still held after the client went away"
        time.sleep(0.05)
    return time.monotonic() - start


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/ask/stream", {"question": ON_TOPIC}),
        ("/v1/chat/completions", {"stream": True, "messages": [{"role": "user", "content": ON_TOPIC}]}),
    ],
)
def test_a_client_that_disconnects_stops_generation_and_frees_the_slot(
    seed_rag: RAG, local_llm: Any, path: str, body: dict
) -> None:
    llm = WatchedLLM(local_llm)
    rag = rag_with_llm(seed_rag, llm, answer={"mode": "generative"}, retrieval={"top_k": 2})
    queue = GenerationQueue(slots=1, max_waiting=0, timeout=1)
    with running(rag, ServerSettings(port=0, ui=False), queue=queue) as srv:
        with httpx.Client(base_url=srv.url, timeout=120) as client:
            with client.stream("POST", path, json=body) as resp:
                assert resp.status_code == 200
                # Keep the line iterator: dropping it would close the connection (a disconnect).
                lines = resp.iter_lines()
                first = next(line for line in lines if line.startswith("data: "))
                assert first  # the stream is open (sources sent / the role chunk)
                assert llm.first_token.wait(120), "the model never started answering"
                assert queue.stats()["running"] == 1 and not llm.ended.is_set()
        # The response and the client are closed: the connection is gone mid-answer.
        with httpx.Client(base_url=srv.url, timeout=30) as other:
            waited = _wait_until_free(other, within=2.0)
            assert llm.ended.wait(1.0), "the model's stream was not closed"
            tokens = llm.tokens
            # The one slot is free at once: with no waiting line a busy queue would answer 429.
            resp = other.post("/api/ask", json={"question": OFF_TOPIC})
            assert resp.status_code == 200 and resp.json()["refused"], resp.text
            time.sleep(0.3)
            assert llm.tokens == tokens  # nothing is generated any more
            assert not local_llm._gen_lock.locked()  # the model is free for the next answer
    print(f"{path}: slot free {waited:.2f}s after the disconnect")


# -- one hostile request cannot stall the server -------------------------------------------------
HOSTILE = {
    "question": "what about it?",
    "history": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "[1] x" + " " * 19990 + "x"}],
}


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads a process's CPU time from /proc")
def test_the_20000_character_history_request_is_cheap_and_healthz_stays_fast(tmp_path: Path) -> None:
    """Issue 10: this request burned 27 s of server CPU and /healthz took 6.3 s meanwhile. A real
    `rag serve` (default settings, bundled model) must answer it within 1 s of CPU, and /healthz must
    not wait for them while 4 run in parallel: < 1 s here, a bound that still catches the blocking
    (6.3 s) on a loaded CI machine; the figure itself (tens of ms idle) is printed."""
    env = {"RAG_STORE__PATH": str(tmp_path / "chroma")}
    with rag_serve(tmp_path / "serve.log", env) as (base, proc), httpx.Client(base_url=base, timeout=120) as http:
        assert http.post("/api/ask", json={"question": ON_TOPIC}).status_code == 200  # warm
        before = _cpu_seconds(proc.pid)
        alone = http.post("/api/ask", json=HOSTILE)
        cpu = _cpu_seconds(proc.pid) - before
        assert alone.status_code in (200, 400), alone.text
        assert cpu < 1.0, f"one hostile request cost {cpu:.2f} s of server CPU"

        statuses: list[int] = []

        def hostile() -> None:
            with httpx.Client(base_url=base, timeout=120) as own:
                statuses.append(own.post("/api/ask", json=HOSTILE).status_code)

        workers = [threading.Thread(target=hostile) for _ in range(4)]
        before = _cpu_seconds(proc.pid)
        for w in workers:
            w.start()
        latencies = []
        while any(w.is_alive() for w in workers):
            t0 = time.perf_counter()
            assert http.get("/healthz").status_code == 200
            latencies.append(time.perf_counter() - t0)
            time.sleep(0.05)
        for w in workers:
            w.join()
        cpu4 = _cpu_seconds(proc.pid) - before
    assert sorted(statuses) == [alone.status_code] * 4
    assert latencies, "the 4 requests ended before /healthz could be asked"
    assert max(latencies) < 1.0, f"/healthz took up to {max(latencies) * 1000:.0f} ms ({len(latencies)} polls)"
    assert cpu4 < 4.0, f"4 hostile requests cost {cpu4:.2f} s of server CPU"
    print(f"hostile request: {cpu:.2f} s CPU alone, {cpu4:.2f} s for 4; /healthz max "
          f"{max(latencies) * 1000:.0f} ms over {len(latencies)} polls")
