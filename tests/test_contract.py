"""The OpenAPI document states what the server accepts and answers (issue 10): one test per kind of
contract failure the first schemathesis run found, each checking the document and the server's
answer together. The app runs in-process (starlette's TestClient) over the seed store; the last test
checks the same against a real uvicorn server."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema_rs
import pytest
from starlette.testclient import TestClient

from rag import RAG
from rag.serve import ServerSettings, create_app, running

from .fakes import rag_with_llm

KEY = "k3y-for-tests"
ON_TOPIC = "Which paper proposes a lifelong learning agent for formal theorem proving?"
OPERATIONS = [
    ("get", "/healthz"),
    ("post", "/api/ask"),
    ("post", "/api/ask/stream"),
    ("post", "/api/export"),
    ("post", "/api/compare"),
    ("get", "/api/papers/{paper_id}"),
    ("get", "/api/map"),
    ("post", "/api/permalink"),
    ("get", "/v1/models"),
    ("get", "/v1/models/{model_id}"),
    ("post", "/v1/chat/completions"),
]


@pytest.fixture(scope="module")
def rag(seed_rag) -> RAG:
    return rag_with_llm(seed_rag, None, retrieval={"top_k": 2})


@pytest.fixture(scope="module")
def open_app(rag: RAG) -> TestClient:
    with TestClient(create_app(rag, ServerSettings(ui=False)), raise_server_exceptions=False) as client:
        yield client


@pytest.fixture(scope="module")
def keyed_app(rag: RAG) -> TestClient:
    with TestClient(
        create_app(rag, ServerSettings(ui=False, api_key=KEY)), raise_server_exceptions=False
    ) as c:
        yield c


def doc_of(client: TestClient) -> dict[str, Any]:
    resp = client.get("/openapi.json")
    assert resp.status_code == 200
    return resp.json()


def request_schema(doc: dict[str, Any], path: str) -> Any:
    """A validator of the JSON body of POST `path`, with the document's components."""
    body = doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
    return jsonschema_rs.validator_for({**body, "components": doc["components"]})


def error_of(resp: httpx.Response, status: int) -> dict[str, str]:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    body = resp.json()
    assert set(body) == {"error"} and set(body["error"]) == {"type", "message"}
    return body["error"]


def test_authorization_is_in_the_document_only_when_a_key_is_set(
    open_app: TestClient, keyed_app: TestClient
) -> None:
    doc = doc_of(open_app)
    assert "securitySchemes" not in doc.get("components", {})
    for method, path in OPERATIONS:
        op = doc["paths"][path][method]
        assert "security" not in op and "401" not in op["responses"], path
        assert all(p["in"] != "header" for p in op.get("parameters", [])), path
    assert open_app.get("/v1/models").status_code == 200  # and the server asks for none

    doc = doc_of(keyed_app)
    assert doc["components"]["securitySchemes"] == {
        "HTTPBearer": {"type": "http", "scheme": "bearer", "description": "The server's RAG_SERVER__API_KEY."}
    }
    for method, path in OPERATIONS:
        op = doc["paths"][path][method]
        if path == "/healthz":
            assert "security" not in op and keyed_app.get(path).status_code == 200
            continue
        assert op["security"] == [{"HTTPBearer": []}] and "401" in op["responses"], path
    err = error_of(keyed_app.get("/v1/models"), 401)
    assert err["type"] == "authentication_error"
    assert keyed_app.get("/v1/models", headers={"Authorization": f"Bearer {KEY}"}).status_code == 200


@pytest.mark.parametrize("question", ["", " ", "\n\t "])
def test_an_empty_or_blank_question_is_invalid_in_the_document_and_a_400(
    open_app: TestClient, question: str
) -> None:
    doc = doc_of(open_app)
    field = doc["components"]["schemas"]["AskRequest"]["properties"]["question"]
    assert field["minLength"] == 1 and field["maxLength"] == 2000 and field["pattern"] == r"\S"
    ask = request_schema(doc, "/api/ask")
    assert not ask.is_valid({"question": question})
    assert ask.is_valid({"question": "x"}) and not ask.is_valid({"question": "x" * 2001})
    for path in ("/api/ask", "/api/ask/stream"):
        assert "empty" in error_of(open_app.post(path, json={"question": question}), 400)["message"]
    chat = request_schema(doc, "/v1/chat/completions")
    body = {"messages": [{"role": "user", "content": question}]}
    assert not chat.is_valid(body)
    assert "empty" in error_of(open_app.post("/v1/chat/completions", json=body), 400)["message"]
    parts = {"messages": [{"role": "user", "content": [{"type": "text", "text": question}]}]}
    assert not chat.is_valid(parts)
    assert "empty" in error_of(open_app.post("/v1/chat/completions", json=parts), 400)["message"]


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "tool"}],
        [{"role": "tool", "content": "42", "tool_call_id": "a"}, {"role": "user", "content": ON_TOPIC}],
        [{"role": "function", "content": "x"}],
        [{"role": "system", "content": "be brief"}],  # no user message
        [{"role": "assistant", "content": "hi"}],
        [],
    ],
)
def test_messages_without_a_question_or_of_unknown_roles_are_invalid_and_a_400(
    open_app: TestClient, messages: list[dict[str, Any]]
) -> None:
    doc = doc_of(open_app)
    roles = doc["components"]["schemas"]["ChatCompletionRequest"]["properties"]["messages"]["items"]
    assert set(roles["discriminator"]["mapping"]) == {"system", "developer", "user", "assistant"}
    assert not request_schema(doc, "/v1/chat/completions").is_valid({"messages": messages})
    err = error_of(open_app.post("/v1/chat/completions", json={"messages": messages}), 400)
    assert err["type"] == "invalid_request_error"


def test_unknown_models_and_paths_are_documented_404s(open_app: TestClient) -> None:
    doc = doc_of(open_app)
    model = doc["paths"]["/v1/models/{model_id}"]["get"]["responses"]
    assert set(model) == {"200", "404"}
    assert model["404"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error404"}
    assert open_app.get("/v1/models/iclr-rag").json()["id"] == "iclr-rag"
    assert error_of(open_app.get("/v1/models/gpt-4"), 404)["type"] == "not_found"
    for method in ("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"):
        for path in ("/api/nothing", "/v1/nothing", "/api/ask/more", "/v1/models/a/b"):
            assert error_of(open_app.request(method, path), 404)["type"] == "not_found", (method, path)


def test_no_422_anywhere(open_app: TestClient) -> None:
    doc = doc_of(open_app)
    assert "422" not in json.dumps(
        [op["responses"] for item in doc["paths"].values() for op in item.values()]
    )
    assert not {"HTTPValidationError", "ValidationError"} & set(doc["components"]["schemas"])
    bad = [
        ("/api/ask", {"question": "hi", "top_k": "3"}),  # strict: no coercion
        ("/api/ask", {"question": "hi", "extra": 1}),
        ("/api/ask", {"question": 3}),
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": ON_TOPIC}], "stream": 1}),
    ]
    for path, body in bad:
        assert error_of(open_app.post(path, json=body), 400)["type"] == "invalid_request_error", body
        assert not request_schema(doc, path).is_valid(body), body
    # an integral float is an integer in JSON Schema, so the server takes it too
    assert request_schema(doc, "/api/ask").is_valid({"question": "hi", "top_k": 2.0})
    assert open_app.post("/api/ask", json={"question": ON_TOPIC, "top_k": 2.0}).status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("TRACE", "/api/ask", "POST"),
        ("GET", "/api/ask/stream", "POST"),
        ("TRACE", "/healthz", "GET"),
        ("DELETE", "/v1/models", "GET"),
        ("PUT", "/v1/chat/completions", "POST"),
    ],
)
def test_other_methods_are_405_with_allow(open_app: TestClient, method: str, path: str, allow: str) -> None:
    resp = open_app.request(method, path)
    assert error_of(resp, 405)["type"] == "method_not_allowed"
    assert resp.headers["allow"] == allow


def test_error_bodies_match_their_documented_schema(open_app: TestClient) -> None:
    doc = doc_of(open_app)
    schemas = {"components": doc["components"]}
    cases = [
        ("/api/ask", {"question": ""}, 400),
        ("/api/ask", {"question": "x" * 300_000}, 413),
    ]
    for path, body, status in cases:
        resp = open_app.post(path, json=body)
        ref = doc["paths"][path]["post"]["responses"][str(status)]["content"]["application/json"]["schema"]
        assert resp.status_code == status
        jsonschema_rs.validator_for({**ref, **schemas}).validate(resp.json())
    # a body Starlette cannot parse is an invalid request like any other, in the documented shape
    resp = open_app.post("/api/ask", content=b"j\xff", headers={"content-type": "application/json"})
    assert error_of(resp, 400)["type"] == "invalid_request_error"


def test_stream_events_are_documented_one_by_one(open_app: TestClient) -> None:
    """text/event-stream: the document's schema describes each event, and every event sent matches."""
    doc = doc_of(open_app)
    media = doc["paths"]["/api/ask/stream"]["post"]["responses"]["200"]["content"]["text/event-stream"]
    event = jsonschema_rs.validator_for({**media["schema"], "components": doc["components"]})
    raw = open_app.post("/api/ask/stream", json={"question": ON_TOPIC}).text
    events = []
    for block in raw.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append(fields)
        event.validate(fields)
        branch = next(
            b for b in media["schema"]["oneOf"] if b["properties"]["event"]["const"] == fields["event"]
        )
        content = branch["properties"]["data"]["contentSchema"]
        jsonschema_rs.validator_for({**content, "components": doc["components"]}).validate(
            json.loads(fields["data"])
        )
    assert [e["event"] for e in events][:2] == ["condensed", "sources"] and events[-1]["event"] == "answer"
    assert not event.is_valid({"event": "tool", "data": "{}"})


@pytest.mark.slow
def test_a_real_server_serves_the_same_contract(rag: RAG) -> None:
    with running(rag, ServerSettings(port=0, ui=True, api_key=KEY, ui_auth="alice:pa55word")) as srv:
        with httpx.Client(base_url=srv.url, timeout=120) as http:
            doc = http.get("/openapi.json").json()
            assert doc["paths"]["/api/ask"]["post"]["security"] == [{"HTTPBearer": []}]
            assert set(doc["paths"]) == {path for _, path in OPERATIONS}  # the UI's routes are not in it
            auth = {"Authorization": f"Bearer {KEY}"}
            assert (
                "empty"
                in error_of(http.post("/api/ask", json={"question": " "}, headers=auth), 400)["message"]
            )
            body = {"messages": [{"role": "tool"}]}
            assert error_of(http.post("/v1/chat/completions", json=body, headers=auth), 400)
            assert error_of(http.get("/v1/models/gpt-4", headers=auth), 404)["type"] == "not_found"
            resp = http.request("TRACE", "/api/ask")
            assert error_of(resp, 405) and resp.headers["allow"] == "POST"
            assert error_of(http.request("TRACE", "/api/nothing", headers=auth), 404)


def test_a_valid_history_never_makes_the_question_too_long(open_app: TestClient) -> None:
    doc = doc_of(open_app)
    body = {"question": "0", "history": [{"role": "user", "content": "0" * 1999}]}
    assert request_schema(doc, "/api/ask").is_valid(body)
    assert open_app.post("/api/ask", json=body).status_code == 200
