"""`rag.client.Client` against a real running server: typed answers, streaming, chat, clear errors."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from rag import RAG, Answer, Settings, Source
from rag.client import (
    APIConnectionError,
    AuthenticationError,
    BadRequestError,
    Client,
    ServerBusyError,
    ServiceUnavailableError,
)
from rag.errors import InvalidRequestError, RagError
from rag.gate import GenerationGate
from rag.serve import ServerSettings, running

ON_TOPIC = "Which paper proposes a lifelong learning agent for formal theorem proving?"
OFF_TOPIC = "What is the capital of France?"
LEAN = "LeanAgent: Lifelong Learning for Formal Theorem Proving"


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> RAG:
    path = tmp_path_factory.mktemp("client") / "chroma"
    return RAG(Settings(store={"path": path}, retrieval={"top_k": 2}, llm={"max_tokens": 64}))


@pytest.fixture(scope="module")
def server(rag: RAG):
    with running(rag, ServerSettings(port=0, ui=False, api_key="k")) as srv:
        yield srv


def test_ask_returns_the_library_types(server) -> None:
    with Client(server.url, api_key="k") as client:
        assert client.health()["papers"] == 19
        answer = client.ask(OFF_TOPIC)
    assert isinstance(answer, Answer) and answer.refused
    assert all(isinstance(s, Source) for s in answer.sources)


def test_errors_are_clear_exceptions(server, rag: RAG) -> None:
    with pytest.raises(AuthenticationError, match="401"):
        Client(server.url).ask(OFF_TOPIC)
    with pytest.raises(AuthenticationError):
        Client(server.url, api_key="wrong").ask(OFF_TOPIC)
    client = Client(server.url, api_key="k")
    with pytest.raises(BadRequestError, match="top_k") as info:
        client.ask(OFF_TOPIC, top_k=500)
    assert isinstance(info.value, InvalidRequestError) and info.value.status_code == 400
    with pytest.raises(BadRequestError, match="empty"):
        list(client.stream("   "))
    with pytest.raises(TypeError):
        client.ask("q", history=[42])  # type: ignore[list-item]

    gate = GenerationGate(slots=1, max_waiting=0, timeout=1)
    with running(rag, ServerSettings(port=0, ui=False), gate=gate) as busy, gate.slot():
        with pytest.raises(ServerBusyError) as info:
            Client(busy.url).ask(OFF_TOPIC)
        assert info.value.status_code == 429


def test_stopped_server_and_empty_store(tmp_path: Path) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    client = Client(f"http://127.0.0.1:{port}", timeout=5)
    for call in (lambda: client.ask(OFF_TOPIC), lambda: list(client.stream(OFF_TOPIC)), client.health):
        with pytest.raises(APIConnectionError, match="cannot reach the RAG server") as info:
            call()
        assert isinstance(info.value, RagError)

    empty = RAG(Settings(store={"path": tmp_path / "empty", "auto_seed": False}))
    with running(empty, ServerSettings(port=0, ui=False)) as srv:
        with pytest.raises(ServiceUnavailableError, match="no papers") as info:
            Client(srv.url).ask(ON_TOPIC)
        assert info.value.error_type == "empty_store"
        with pytest.raises(ServiceUnavailableError):
            list(Client(srv.url).stream(ON_TOPIC))


@pytest.mark.slow
def test_stream_and_chat_with_the_local_model(server) -> None:
    client = Client(server.url, api_key="k")
    events = list(client.stream(ON_TOPIC))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["condensed", "sources"] and kinds[-1] == "answer" and kinds.count("token") >= 3
    assert isinstance(events[1].sources[0], Source) and events[1].sources[0].title == LEAN
    final = events[-1].answer
    assert isinstance(final, Answer) and final.citations

    first = client.chat(ON_TOPIC)
    assert first.sources[0].title == LEAN and len(client.history) == 2
    follow = client.chat("What benchmark does it use?")
    assert follow.question == "What benchmark does it use?"
    assert follow.standalone_question != follow.question
    assert follow.sources[0].title == LEAN  # the follow-up alone would be refused (see test_chat)
    client.reset()
    assert client.history == []
