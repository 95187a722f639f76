"""Who may use a served RAG (issue 10): with an API key, every route that can answer or upload needs
the key (/api, /v1) or the UI login (Gradio's routes); startup refuses settings that would leave a
route open; the chat UI applies the server's limits on the server side, not only in the browser.

Real servers: `create_app` under uvicorn (rag.serve.running) over the seed store, and `rag serve`
subprocesses for startup."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from rag import RAG
from rag.serve import ServerSettings, running

from .fakes import rag_with_llm
from .servers import free_port

KEY = "k3y-for-tests"
USER, PASSWORD = "alice", "pa55word"
ON_TOPIC = "Which paper proposes a lifelong learning agent for formal theorem proving?"
FOLLOW_UP = "What does LeanAgent prove?"
BEARER = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture(scope="module")
def rag(seed_rag) -> RAG:
    """The seed store (read-only), the local model (evidence answers: no LLM call), top_k 2."""
    return rag_with_llm(seed_rag, None, retrieval={"top_k": 2})


@pytest.fixture(scope="module")
def locked(rag: RAG):
    """A server with the UI, an API key and a UI login; history limited to 2 messages."""
    cfg = ServerSettings(port=0, api_key=KEY, ui_auth=f"{USER}:{PASSWORD}", max_history_messages=2)
    with running(rag, cfg) as srv:
        yield srv


@contextlib.contextmanager
def login(base: str) -> Iterator[httpx.Client]:
    """An HTTP session logged in to the UI (Gradio's login form and cookie)."""
    with httpx.Client(base_url=base, timeout=120) as http:
        assert http.post("/login", data={"username": USER, "password": PASSWORD}).status_code == 200
        yield http


def ui_ask(http: httpx.Client, question: str, session: str) -> tuple[list[dict], list[str]]:
    """Ask through the UI's queue as the browser does (queue/join, then the queue/data stream):
    the chat messages of the finished turn and the warnings Gradio sent."""
    config = http.get("/config").json()
    inputs = {c["id"]: c for c in config["components"]}
    fn = next(d for d in config["dependencies"] if d["api_name"] == "respond")
    defaults = {"checkboxgroup": [], "slider": 2, "radio": "hybrid", "state": None, "textbox": question, "checkbox": False}
    data = [defaults[inputs[i]["type"]] for i in fn["inputs"]]
    joined = http.post(
        "/gradio_api/queue/join",
        json={"data": data, "fn_index": fn["id"], "session_hash": session, "trigger_id": fn["targets"][0][0]},
    )
    assert joined.status_code == 200, joined.text
    warnings: list[str] = []
    with http.stream("GET", "/gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            if not line.startswith("data: "):
                continue
            msg = json.loads(line[6:])
            if msg.get("msg") == "log":
                warnings.append(msg["log"])
            if msg.get("msg") == "process_completed":
                assert msg["success"], msg
                chat = msg["output"]["data"][0]
                return chat, warnings
    raise AssertionError("the queue closed without a result")


def text(message: dict) -> str:
    """A chat message's text (Gradio sends content as a list of parts)."""
    content = message["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


# -- the locked server -----------------------------------------------------------------------------
GRADIO_ROUTES = [  # (method, path, status without the login)
    ("GET", "/config", 401),
    ("GET", "/gradio_api/info", 401),
    ("POST", "/gradio_api/queue/join", 401),
    ("GET", "/gradio_api/queue/data?session_hash=abc", 401),
    ("POST", "/gradio_api/run/predict", 401),
    ("GET", "/gradio_api/file=/etc/hostname", 401),
    ("GET", "/gradio_api/login_check", 401),
    # not used by the screen: gone, login or not
    ("POST", "/gradio_api/upload", 404),
    ("POST", "/gradio_api/process_recording", 404),
    ("POST", "/gradio_api/call/respond", 404),
    ("POST", "/gradio_api/api/respond", 404),
    ("GET", "/gradio_api/openapi.json", 404),
    ("GET", "/monitoring", 404),
]


@pytest.mark.slow
@pytest.mark.parametrize(("method", "path", "status"), GRADIO_ROUTES)
def test_gradio_routes_refuse_without_the_login(locked, method: str, path: str, status: int) -> None:
    body = {"data": [ON_TOPIC], "fn_index": 1, "session_hash": "abc"} if method == "POST" else None
    resp = httpx.request(method, locked.url + path, json=body, timeout=30)
    assert resp.status_code == status, resp.text
    assert "LeanAgent" not in resp.text


@pytest.mark.slow
def test_upload_is_refused_even_with_the_login(locked) -> None:
    with login(locked.url) as http:
        files = {"files": ("a.txt", b"x" * 1000, "text/plain")}
        resp = http.post("/gradio_api/upload", files=files)
        assert resp.status_code == 404 and resp.json()["error"]["type"] == "not_found"
        big = http.post(
            "/gradio_api/upload", content=b"x" * 2_000_000, headers={"content-type": "text/plain"}
        )
        assert big.status_code == 413  # the body limit holds on every path, before any route
        assert http.get("/config").status_code == 200  # the login itself works


@pytest.mark.slow
def test_api_needs_the_key_and_the_ui_login_is_no_key(locked) -> None:
    ask = {"question": ON_TOPIC}
    chat = {"messages": [{"role": "user", "content": ON_TOPIC}]}
    with login(locked.url) as http:  # the UI's session cookie does not open the API
        assert http.post("/api/ask", json=ask).status_code == 401
        assert http.post("/api/ask/stream", json=ask).status_code == 401
        assert http.post("/v1/chat/completions", json=chat).status_code == 401
        assert http.get("/v1/models").status_code == 401
        assert http.get("/healthz").status_code == 200
    with httpx.Client(base_url=locked.url, timeout=120, headers=BEARER) as http:
        answer = http.post("/api/ask", json=ask).json()
        assert any("LeanAgent" in c["title"] for c in answer["citations"])
        completion = http.post("/v1/chat/completions", json=chat).json()
        assert "LeanAgent" in completion["choices"][0]["message"]["content"]
        assert http.get("/config").status_code == 401  # and the key is no UI login


@pytest.mark.slow
def test_the_logged_in_ui_answers_and_keeps_its_history_within_the_limit(locked) -> None:
    """history limit 2 messages: the third question of a session would send 4 without the trim."""
    session = uuid.uuid4().hex[:10]
    with login(locked.url) as http:
        for n, question in enumerate([ON_TOPIC, FOLLOW_UP, FOLLOW_UP], start=1):
            chat, warnings = ui_ask(http, question, session)
            assert warnings == []
            assert len(chat) == 2 * n  # every turn answered, none refused for its history
            assert "LeanAgent" in text(chat[-1]) and "⚠" not in text(chat[-1])


@pytest.mark.slow
def test_an_over_limit_question_through_the_ui_queue_is_refused(locked) -> None:
    with login(locked.url) as http:
        chat, warnings = ui_ask(http, "LeanAgent " * 201, uuid.uuid4().hex[:10])  # 2,010 characters
    assert any("2000" in w for w in warnings), warnings
    assert chat[-1]["role"] == "assistant" and "⚠" in text(chat[-1]) and "2000" in text(chat[-1])
    assert "rag-src" not in text(chat[-1]) and "LeanAgent:" not in text(chat[-1])  # no answer


# -- startup -----------------------------------------------------------------------------------------
def serve(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.Popen:
    full = {
        **os.environ,
        "RAG_STORE__PATH": str(tmp_path / "chroma"),
        "GRADIO_ANALYTICS_ENABLED": "False",
        **env,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "rag.cli", "serve", *args],
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


REFUSED = {
    "empty key": ({"RAG_SERVER__API_KEY": ""}, (), "RAG_SERVER__API_KEY is set but empty"),
    "blank key": ({"RAG_SERVER__API_KEY": "   "}, (), "RAG_SERVER__API_KEY is set but empty"),
    "key, open UI": ({"RAG_SERVER__API_KEY": KEY}, (), "RAG_SERVER__UI_AUTH"),
    "network, no key": ({}, ("--host", "0.0.0.0"), "host 0.0.0.0 is reachable from the network"),
    "network, no key, no UI": ({}, ("--host", "0.0.0.0", "--no-ui"), "RAG_SERVER__API_KEY is not set"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(REFUSED))
def test_rag_serve_refuses_settings_that_leave_a_route_open(tmp_path: Path, case: str) -> None:
    env, args, message = REFUSED[case]
    port = free_port()
    t0 = time.monotonic()
    proc = serve(tmp_path, {"RAG_SERVER__PORT": str(port), **env}, *args)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 1, out
    assert "the server will not start" in out and message in out, out
    # refused before anything loads or binds: no store, no model, no uvicorn
    assert "Uvicorn running" not in out and "Started server" not in out
    assert not (tmp_path / "chroma").exists()
    assert not listening(port)
    assert time.monotonic() - t0 < 60


def test_the_app_refuses_them_too(rag: RAG) -> None:
    from rag.errors import ConfigError
    from rag.serve import create_app

    with pytest.raises(ConfigError, match="set but empty"):
        create_app(rag, ServerSettings(api_key=""))
    with pytest.raises(ConfigError, match="RAG_SERVER__UI_AUTH"):
        create_app(rag, ServerSettings(api_key=KEY))
    with pytest.raises(ConfigError, match="reachable from the network"):
        create_app(rag, ServerSettings(host="0.0.0.0", ui=False))
    assert ServerSettings(host="::1").loopback and ServerSettings(host="[::1]").loopback
    assert not ServerSettings(host="192.168.1.5", api_key=KEY, ui=False).startup_problems()


@pytest.mark.slow
def test_allow_unauthenticated_starts_with_a_warning(tmp_path: Path) -> None:
    """API key set, UI without a login, explicitly allowed: the UI is open, the API still needs the key."""
    port = free_port()
    env = {
        "RAG_SERVER__PORT": str(port),
        "RAG_SERVER__API_KEY": KEY,
        "RAG_SERVER__ALLOW_UNAUTHENTICATED": "true",
    }
    proc = serve(tmp_path, env, "--host", "127.0.0.1")
    try:
        deadline = time.monotonic() + 240
        while not listening(port):
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "rag serve did not start"
            time.sleep(1)
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(base + "/config", timeout=30).status_code == 200
        assert httpx.post(base + "/api/ask", json={"question": ON_TOPIC}, timeout=30).status_code == 401
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=60)
    assert "RAG_SERVER__ALLOW_UNAUTHENTICATED: routes that answer need no credential" in out, out
