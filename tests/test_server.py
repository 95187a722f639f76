"""The HTTP API against a real uvicorn server: native, streaming, OpenAI-compatible, limits, auth, queue."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from rag import RAG, Settings
from rag.gate import GenerationGate
from rag.serve import ServerSettings, running

from .servers import free_port

ON_TOPIC = "Which paper proposes a lifelong learning agent for formal theorem proving?"
OFF_TOPIC = "What is the capital of France?"
LEAN = "LeanAgent: Lifelong Learning for Formal Theorem Proving"


def _settings(path: Path, **llm) -> Settings:
    """The seed corpus with short answers, so tests with the local model stay quick."""
    return Settings(store={"path": path}, retrieval={"top_k": 2}, llm={"max_tokens": 64, **llm})


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> RAG:
    return RAG(_settings(tmp_path_factory.mktemp("api") / "chroma"))


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


def test_ui_login_when_ui_auth_is_set(rag: RAG) -> None:
    with running(rag, ServerSettings(port=0, ui_auth="alice:pa55word")) as srv:
        with httpx.Client(base_url=srv.url) as http:
            assert http.get("/config").status_code == 401
            assert http.post("/login", data={"username": "alice", "password": "nope"}).status_code == 400
            assert http.post("/login", data={"username": "alice", "password": "pa55word"}).status_code == 200
            assert http.get("/config").status_code == 200


def test_full_queue_gets_429_and_a_long_wait_503(rag: RAG) -> None:
    gate = GenerationGate(slots=1, max_waiting=0, timeout=0.5)
    with running(rag, ServerSettings(port=0, ui=False), gate=gate) as srv:
        with httpx.Client(base_url=srv.url) as http, gate.slot():  # the one slot is busy
            for path in ("/api/ask", "/api/ask/stream"):
                err = _error(http.post(path, json={"question": OFF_TOPIC}), 429)
                assert err["type"] == "queue_full" and "busy" in err["message"]
            assert http.post("/api/ask", json={"question": OFF_TOPIC}).headers["retry-after"]
    gate = GenerationGate(slots=1, max_waiting=4, timeout=0.3)
    with running(rag, ServerSettings(port=0, ui=False), gate=gate) as srv:
        with httpx.Client(base_url=srv.url) as http, gate.slot():
            for path in ("/api/ask", "/api/ask/stream", "/v1/chat/completions"):
                body = (
                    {"question": OFF_TOPIC}
                    if path.startswith("/api")
                    else {"messages": [{"role": "user", "content": OFF_TOPIC}], "stream": True}
                )
                assert _error(http.post(path, json=body), 503)["type"] == "queue_timeout"


def test_unreachable_llm_is_a_503_with_a_message(tmp_path: Path) -> None:
    import openai

    rag = RAG(
        _settings(
            tmp_path / "chroma",
            base_url=f"http://127.0.0.1:{free_port()}/v1",
            model="m",
            max_retries=0,
            timeout=5,
        )
    )
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


def test_serve_command_help(capsys: pytest.CaptureFixture[str]) -> None:
    from rag.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert "--host" in text and "--port" in text and "RAG_SERVER__" in text


# -- with the local LLM -------------------------------------------------------------------------------
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
