"""The HTTP API against a real uvicorn server: native, streaming, OpenAI-compatible, limits, auth, queue.

Evidence answers (the default with the local model) need no LLM; generated answers, their SSE and
OpenAI chunk framing and a model failing mid-stream are tested with a scripted LLM (tests/fakes.py)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from rag import RAG, Settings
from rag.queue import GenerationQueue
from rag.serve import ServerSettings, running
from rag.types import Answer

from .fakes import Broken, rag_with_llm
from .servers import free_port

ON_TOPIC = "Which paper proposes a lifelong learning agent for formal theorem proving?"
OFF_TOPIC = "What is the capital of France?"
LEAN = "LeanAgent: Lifelong Learning for Formal Theorem Proving"


@pytest.fixture(scope="module")
def rag(seed_rag) -> RAG:
    """The seed store (shared read-only) with short answers (top_k 2, 64 tokens); the real local LLM.
    No answer cache: these tests ask the same questions again to see the routes work (the cache is
    tested in tests/test_queue.py)."""
    return rag_with_llm(seed_rag, None, retrieval={"top_k": 2}, llm={"max_tokens": 64}, answer={"cache_size": 0})


@pytest.fixture(scope="module")
def server(rag: RAG):
    with running(rag, ServerSettings(port=0, ui=False)) as srv:
        yield srv


@pytest.fixture
def http(server) -> httpx.Client:
    with httpx.Client(base_url=server.url, timeout=300) as client:
        yield client


def _error(resp: httpx.Response, status: int) -> dict:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    err = resp.json()["error"]
    assert err["type"] and err["message"]
    return err


def _events(text: str) -> list[tuple[str, dict]]:
    out = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines.get("event", "message"), json.loads(lines["data"])))
    return out


def _markers(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"\[(\d+)\]", text)}


def _sse_blocks(raw: str) -> list[list[str]]:
    """The lines of each server-sent event; the stream must end with a blank line."""
    assert raw.endswith("\n\n"), raw[-200:]
    return [block.split("\n") for block in raw[:-2].split("\n\n")]


# Scripted answers to ON_TOPIC: both sentences are stated by LeanAgent's abstract.
S1 = "LeanAgent successfully generates formal proofs for 155 theorems across 23 diverse Lean repositories [1]."
S2 = "LeanAgent achieves exceptional scores in stability and backward transfer [1]."
SCRIPT = f"{S1} {S2}"


@contextlib.contextmanager
def fake_server(fake_rag, replies, queue: GenerationQueue | None = None):
    """A server whose RAG answers with a scripted LLM (generative mode, the seed store, top_k 2)."""
    rag = fake_rag(replies, retrieval={"top_k": 2})
    with running(rag, ServerSettings(port=0, ui=False), queue=queue) as srv:
        with httpx.Client(base_url=srv.url, timeout=60) as http:
            yield rag, http


# -- no LLM needed ----------------------------------------------------------------------------------
def test_healthz_models_and_offline_docs(http: httpx.Client, rag: RAG) -> None:
    health = http.get("/healthz").json()
    assert health["status"] == "ok" and health["papers"] == 19
    assert health["llm"] == rag.settings.llm.display_name
    models = http.get("/v1/models").json()
    assert models["object"] == "list" and models["data"][0]["id"] == "iclr-rag"
    docs = http.get("/docs")
    assert docs.status_code == 200 and "/docs-static/swagger-ui-bundle.js" in docs.text
    assert "cdn." not in docs.text  # the docs page works offline
    assert http.get("/docs-static/swagger-ui-bundle.js").status_code == 200
    paths = http.get("/openapi.json").json()["paths"]
    assert {"/api/ask", "/api/ask/stream", "/v1/chat/completions", "/v1/models", "/healthz"} <= set(paths)


def test_off_topic_question_is_refused_without_the_llm(http: httpx.Client) -> None:
    answer = http.post("/api/ask", json={"question": OFF_TOPIC}).json()
    assert answer["refused"] and not answer["llm_called"] and answer["citations"] == []


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        ({"question": ""}, 400, "empty"),
        ({"question": "x" * 2001}, 400, "limit is 2000"),
        ({"question": "hi", "top_k": 0}, 400, "top_k"),
        ({"question": "hi", "top_k": 21}, 400, "top_k"),
        ({"question": "hi", "top_k": "many"}, 400, "top_k"),
        ({"question": "hi", "decisions": ["Best paper"]}, 400, "decisions"),
        ({"question": "hi", "retriever": "magic"}, 400, "retriever"),
        ({"question": "hi", "history": [{"role": "user", "content": "q"}] * 21}, 400, "limit is 20"),
        ({"question": "hi", "history": [{"role": "user", "content": "q" * 19000}] * 2}, 400, "characters"),
        ({"question": "hi", "history": [{"role": "robot", "content": "q"}]}, 400, "role"),
        ({"question": "hi", "surprise": 1}, 400, "surprise"),
        ({}, 400, "question"),
        ([1, 2], 400, "valid dictionary"),
    ],
)
def test_malformed_or_oversized_requests_get_4xx_json(
    http: httpx.Client, body, status: int, fragment: str
) -> None:
    for path in ("/api/ask", "/api/ask/stream"):
        err = _error(http.post(path, json=body), status)
        assert fragment.lower() in err["message"].lower(), err


def test_broken_bodies_and_unknown_paths(http: httpx.Client) -> None:
    headers = {"content-type": "application/json"}
    assert (
        "not valid JSON" in _error(http.post("/api/ask", content=b"{oops", headers=headers), 400)["message"]
    )
    big = json.dumps({"question": "x" * 300_000}).encode()
    _error(http.post("/api/ask", content=big, headers=headers), 413)

    def chunked():
        yield big

    _error(http.post("/api/ask", content=chunked(), headers=headers), 413)  # no Content-Length
    _error(http.get("/api/nothing"), 404)
    _error(http.post("/v1/chat/completions", json={"messages": []}), 400)
    err = _error(
        http.post("/v1/chat/completions", json={"messages": [{"role": "assistant", "content": "hi"}]}), 400
    )
    assert "last message" in err["message"]


def test_api_key_protects_the_api_but_not_health(rag: RAG) -> None:
    import openai

    with running(rag, ServerSettings(port=0, ui=False, api_key="s3cret-key")) as srv:
        with httpx.Client(base_url=srv.url) as http:
            assert http.get("/healthz").status_code == 200
            _error(http.get("/v1/models"), 401)
            _error(http.post("/api/ask", json={"question": OFF_TOPIC}), 401)
            _error(http.get("/v1/models", headers={"Authorization": "Bearer wrong"}), 401)
            _error(
                http.post(
                    "/api/ask/stream", json={"question": OFF_TOPIC}, headers={"Authorization": "s3cret-key"}
                ),
                401,
            )
            ok = {"Authorization": "Bearer s3cret-key"}
            assert http.get("/v1/models", headers=ok).status_code == 200
            assert http.post("/api/ask", json={"question": OFF_TOPIC}, headers=ok).json()["refused"]
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=srv.url + "/v1", api_key="wrong", max_retries=0).models.list()
        ids = [m.id for m in openai.OpenAI(base_url=srv.url + "/v1", api_key="s3cret-key").models.list()]
        assert ids == ["iclr-rag"]


@pytest.mark.slow
def test_ui_login_when_ui_auth_is_set(rag: RAG) -> None:
    with running(rag, ServerSettings(port=0, ui_auth="alice:pa55word")) as srv:
        with httpx.Client(base_url=srv.url) as http:
            assert http.get("/config").status_code == 401
            assert http.post("/login", data={"username": "alice", "password": "nope"}).status_code == 400
            assert http.post("/login", data={"username": "alice", "password": "pa55word"}).status_code == 200
            assert http.get("/config").status_code == 200


def test_full_queue_gets_429_and_a_long_wait_503(rag: RAG) -> None:
    queue = GenerationQueue(slots=1, max_waiting=0, timeout=0.5)
    with running(rag, ServerSettings(port=0, ui=False), queue=queue) as srv:
        with httpx.Client(base_url=srv.url) as http, queue.slot():  # the one slot is busy
            for path in ("/api/ask", "/api/ask/stream"):
                err = _error(http.post(path, json={"question": OFF_TOPIC}), 429)
                assert err["type"] == "queue_full" and "busy" in err["message"]
            assert http.post("/api/ask", json={"question": OFF_TOPIC}).headers["retry-after"]
    queue = GenerationQueue(slots=1, max_waiting=4, timeout=0.3)
    with running(rag, ServerSettings(port=0, ui=False), queue=queue) as srv:
        with httpx.Client(base_url=srv.url) as http, queue.slot():
            assert _error(http.post("/api/ask", json={"question": OFF_TOPIC}), 503)["type"] == "queue_timeout"
            # A stream has started (it reported its place in line): the timeout ends it as an error event.
            native = http.post("/api/ask/stream", json={"question": OFF_TOPIC})
            assert native.status_code == 200 and native.text.startswith("event: queued\n")
            error = json.loads(native.text.split("event: error\ndata: ")[1].split("\n")[0])
            assert error["error"]["type"] == "queue_timeout" and error["error"]["status"] == 503
            body = {"messages": [{"role": "user", "content": OFF_TOPIC}], "stream": True}
            oai = http.post("/v1/chat/completions", json=body)
            assert oai.status_code == 200 and ": queued " in oai.text
            error = json.loads(oai.text.split("data: ")[-1].split("\n")[0])
            assert error["error"]["type"] == "queue_timeout" and error["error"]["code"] == 503


def test_unreachable_llm_is_a_503_with_a_message(seed_rag) -> None:
    import openai

    dead = {"base_url": f"http://127.0.0.1:{free_port()}/v1", "model": "m", "max_retries": 0, "timeout": 5}
    rag = rag_with_llm(seed_rag, None, retrieval={"top_k": 2}, llm={"max_tokens": 64, **dead})
    assert type(rag.llm).__name__ == "OpenAILike"  # a real client against a closed port
    with running(rag, ServerSettings(port=0, ui=False)) as srv:
        with httpx.Client(base_url=srv.url, timeout=60) as http:
            err = _error(http.post("/api/ask", json={"question": ON_TOPIC}), 503)
            assert err["type"] == "llm_unavailable" and "unavailable" in err["message"]
            events = _events(http.post("/api/ask/stream", json={"question": ON_TOPIC}).text)
            assert [e for e, _ in events][:2] == ["condensed", "sources"]
            assert events[-1][0] == "error" and events[-1][1]["error"]["type"] == "llm_unavailable"
        client = openai.OpenAI(base_url=srv.url + "/v1", api_key="x", max_retries=0)
        with pytest.raises(openai.InternalServerError, match="unavailable"):
            client.chat.completions.create(model="iclr-rag", messages=[{"role": "user", "content": ON_TOPIC}])


def test_empty_store_is_a_503(tmp_path: Path) -> None:
    rag = RAG(Settings(store={"path": tmp_path / "empty", "auto_seed": False}))
    with running(rag, ServerSettings(port=0, ui=False)) as srv:
        with httpx.Client(base_url=srv.url) as http:
            assert http.get("/healthz").json()["papers"] == 0
            err = _error(http.post("/api/ask", json={"question": ON_TOPIC}), 503)
            assert err["type"] == "empty_store"
            assert (
                _error(http.post("/api/ask/stream", json={"question": ON_TOPIC}), 503)["type"]
                == "empty_store"
            )


# -- a scripted LLM: generated answers through the server ------------------------------------------
def test_native_stream_of_a_scripted_answer_is_exact(fake_rag) -> None:
    with fake_server(fake_rag, [SCRIPT]) as (rag, http):
        with http.stream("POST", "/api/ask/stream", json={"question": ON_TOPIC}) as resp:
            assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
            assert resp.headers["cache-control"] == "no-cache" and resp.headers["x-accel-buffering"] == "no"
            raw = resp.read().decode()
    blocks = _sse_blocks(raw)
    assert [len(b) for b in blocks] == [2] * len(blocks)  # one `event:` and one `data:` line each
    assert all(b[0].startswith("event: ") and b[1].startswith("data: ") for b in blocks)
    events = _events(raw)
    assert [e for e, _ in events] == ["condensed", "sources", "token", "token", "answer"]
    assert events[0][1] == {"standalone_question": ON_TOPIC, "method": "none"}
    sources = events[1][1]["sources"]
    assert len(sources) == 2 and sources[0]["title"] == LEAN
    assert [d for e, d in events if e == "token"] == [{"text": S1}, {"text": " " + S2}]
    answer = events[-1][1]
    assert answer["text"] == SCRIPT and answer["raw_text"] == SCRIPT and answer["mode"] == "generative"
    assert answer["sources"] == sources and [c["title"] for c in answer["citations"]] == [LEAN]
    (call,) = rag.llm.calls  # the prompt holds the question and the two retrieved papers
    assert f"Question: {ON_TOPIC}" in call.text  # and the papers that meet it, no other source
    assert all((f"[{s['number']}] {s['title']}" in call.text) == (s["paper_id"] in answer["matching_ids"]) for s in sources)


def test_native_and_openai_answers_of_a_scripted_model(fake_rag) -> None:
    import openai

    with fake_server(fake_rag, [SCRIPT, SCRIPT]) as (rag, http):
        answer = http.post("/api/ask", json={"question": ON_TOPIC, "top_k": 3}).json()
        assert answer["text"] == SCRIPT and answer["llm_called"] and answer["sources"][0]["title"] == LEAN
        assert len(answer["sources"]) == 3 and answer["completion_tokens"] == -(-len(SCRIPT) // 4)
        client = openai.OpenAI(base_url=str(http.base_url) + "/v1", api_key="unused", max_retries=0)
        done = client.chat.completions.create(
            model="iclr-rag",
            messages=[{"role": "system", "content": "ignored"}, {"role": "user", "content": ON_TOPIC}],
        )
    expected = Answer.model_validate(done.model_extra["answer"])
    assert expected.text == SCRIPT
    assert done.choices[0].message.content == expected.to_markdown() == (
        f"{SCRIPT}\n\n**References**\n\n[1] {LEAN} — {expected.citations[0].url}"
    )
    assert done.choices[0].finish_reason == "stop" and done.object == "chat.completion"
    assert done.usage.completion_tokens == answer["completion_tokens"]
    assert done.model_extra["citations"] == [c.model_dump(mode="json") for c in expected.citations]
    assert "ignored" not in rag.llm.calls[1].text  # a client's system message is not the prompt


def test_openai_stream_of_a_scripted_answer_is_the_exact_chunk_sequence(fake_rag) -> None:
    import openai

    body = {"model": "iclr-rag", "stream": True, "messages": [{"role": "user", "content": ON_TOPIC}]}
    with fake_server(fake_rag, [SCRIPT, SCRIPT]) as (_rag, http):
        raw = http.post("/v1/chat/completions", json=body).text
        client = openai.OpenAI(base_url=str(http.base_url) + "/v1", api_key="unused", max_retries=0)
        parsed = list(client.chat.completions.create(**body))
    blocks = _sse_blocks(raw)
    assert all(len(b) == 1 and b[0].startswith("data: ") for b in blocks)
    assert blocks[-1] == ["data: [DONE]"]
    chunks = [json.loads(b[0][6:]) for b in blocks[:-1]]
    assert {c["id"] for c in chunks} == {chunks[0]["id"]} and chunks[0]["id"].startswith("chatcmpl-")
    assert {(c["object"], c["model"]) for c in chunks} == {("chat.completion.chunk", "iclr-rag")}
    answer = Answer.model_validate(chunks[-1]["answer"])
    assert [c["choices"][0]["delta"] for c in chunks] == [
        {"role": "assistant", "content": ""},
        {"content": S1},
        {"content": " " + S2},
        {"content": answer.tail_markdown()},
        {},
    ]
    assert [c["choices"][0]["finish_reason"] for c in chunks] == [None, None, None, None, "stop"]
    assert chunks[-1]["citations"] == [c.model_dump(mode="json") for c in answer.citations]
    assert answer.text == SCRIPT and answer.tail_markdown().startswith("\n\n**References**\n\n[1] " + LEAN)
    # The openai client reads the same sequence.
    assert [c.choices[0].delta.content for c in parsed] == ["", S1, " " + S2, answer.tail_markdown(), None]
    assert parsed[-1].choices[0].finish_reason == "stop" and parsed[-1].model_extra["answer"]["text"] == SCRIPT


def test_llm_failing_mid_stream_is_an_llm_unavailable_error_event(fake_rag) -> None:
    broken = Broken(f"{S1} LeanAgent", ConnectionError("connection reset"))
    openai_body = {"stream": True, "messages": [{"role": "user", "content": ON_TOPIC}]}
    with fake_server(fake_rag, [broken, broken, ConnectionError("refused")]) as (_rag, http):
        native = http.post("/api/ask/stream", json={"question": ON_TOPIC})
        assert native.status_code == 200  # the stream had started: the error is its last event
        compat = http.post("/v1/chat/completions", json=openai_body)
        err = _error(http.post("/api/ask", json={"question": ON_TOPIC}), 503)
    events = _events(native.text)
    assert [e for e, _ in events] == ["condensed", "sources", "token", "error"]
    assert events[2][1] == {"text": S1}
    error = events[-1][1]["error"]
    assert error["type"] == "llm_unavailable" and error["status"] == 503
    assert "ConnectionError: connection reset" in error["message"]
    datas = [json.loads(b[0][6:]) for b in _sse_blocks(compat.text)]
    assert [d["choices"][0]["delta"] for d in datas[:2]] == [{"role": "assistant", "content": ""}, {"content": S1}]
    assert datas[2] == {"error": {"type": "llm_unavailable", "message": error["message"], "code": 503}}
    assert len(datas) == 3 and "[DONE]" not in compat.text  # no [DONE] after an error
    assert err["type"] == "llm_unavailable" and "ConnectionError: refused" in err["message"]


def test_a_streaming_answer_holds_its_slot_until_it_ends(fake_rag) -> None:
    release = threading.Event()

    def slow_model(messages) -> str:  # generation blocks until the test lets it go
        assert release.wait(30), "never released"
        return SCRIPT

    queue = GenerationQueue(slots=1, max_waiting=0, timeout=1)
    with fake_server(fake_rag, slow_model, queue=queue) as (_rag, http), httpx.Client(
        base_url=str(http.base_url), timeout=30
    ) as other:
        with http.stream("POST", "/api/ask/stream", json={"question": ON_TOPIC}) as resp:
            lines = resp.iter_lines()
            try:
                assert next(line for line in lines if line.startswith("event: ")) == "event: condensed"
                assert next(line for line in lines if line.startswith("event: ")) == "event: sources"
                # Sources are out and the model is generating: the one slot is taken.
                assert other.get("/healthz").json()["queue"]["running"] == 1
                busy = _error(other.post("/api/ask", json={"question": OFF_TOPIC}), 429)
                assert busy["type"] == "queue_full"
            finally:
                release.set()
            rest = "\n".join(lines)
        assert "event: answer" in rest and "event: error" not in rest
        assert other.get("/healthz").json()["queue"]["running"] == 0
        assert other.post("/api/ask", json={"question": OFF_TOPIC}).json()["refused"]


def test_serve_command_help(capsys: pytest.CaptureFixture[str]) -> None:
    from rag.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert "--host" in text and "--port" in text and "RAG_SERVER__" in text


# -- evidence answers end to end (the local model's default mode: no LLM call) ----------------------
@pytest.mark.slow
def test_ask_answers_with_citations(http: httpx.Client) -> None:
    answer = http.post("/api/ask", json={"question": ON_TOPIC}).json()
    assert not answer["refused"] and answer["citations"], answer["text"]
    assert _markers(answer["text"]) <= {c["number"] for c in answer["citations"]}
    assert answer["sources"][0]["title"] == LEAN


@pytest.mark.slow
def test_ask_stream_sends_sources_tokens_then_the_answer(http: httpx.Client) -> None:
    with http.stream("POST", "/api/ask/stream", json={"question": ON_TOPIC, "decisions": ["Poster"]}) as resp:
        assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
        events = _events(resp.read().decode())
    kinds = [e for e, _ in events]
    assert kinds[0] == "condensed" and kinds[1] == "sources" and kinds[-1] == "answer"
    assert kinds.count("token") >= 3
    answer = events[-1][1]
    assert answer["sources"][0]["title"] == LEAN
    assert _markers(answer["text"]) <= {c["number"] for c in answer["citations"]}


@pytest.mark.slow
def test_openai_client_chat_completions(server) -> None:
    import openai

    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0, timeout=300)
    done = client.chat.completions.create(
        model="iclr-rag",
        messages=[{"role": "system", "content": "ignored"}, {"role": "user", "content": ON_TOPIC}],
    )
    text = done.choices[0].message.content
    citations = done.model_extra["citations"]
    assert citations and "**References**" in text
    assert all(f"[{c['number']}] {c['title']}" in text for c in citations)
    assert done.model_extra["answer"]["sources"][0]["title"] == LEAN

    chunks = list(
        client.chat.completions.create(
            model="iclr-rag",
            stream=True,
            messages=[{"role": "user", "content": ON_TOPIC}],
            extra_body={"top_k": 3, "retriever": "dense"},
        )
    )
    pieces = [c.choices[0].delta.content or "" for c in chunks]
    assert sum(1 for p in pieces if p) >= 3  # streamed, not one block
    streamed = "".join(pieces)
    final = chunks[-1]
    assert final.choices[0].finish_reason == "stop"
    assert final.model_extra["answer"]["retriever"] == "dense"
    assert len(final.model_extra["answer"]["sources"]) == 3
    refs = final.model_extra["citations"]
    assert refs and "**References**" in streamed
    assert _markers(streamed.split("**References**")[0]) <= {
        s["number"] for s in final.model_extra["answer"]["sources"]
    }


@pytest.mark.slow
def test_rag_serve_command_starts_the_server(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "RAG_STORE__PATH": str(tmp_path / "chroma"),
        "RAG_SERVER__PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "rag.cli", "serve", "--host", "127.0.0.1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).json()
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "rag serve did not start"
                time.sleep(1)
        assert health["papers"] == 19
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)
        assert page.status_code == 200 and "gradio" in page.text.lower()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
