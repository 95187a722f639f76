"""The OpenAI-compatible API: /v1/models and /v1/chat/completions (with and without streaming)."""

import logging
import time
import uuid
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .api_core import Api, AskRequest, chain_events, close_events, sse, stream_headers
from .chat import ChatTurn, LiveMarkerFilter
from .errors import InvalidRequestError, RagError
from .server_settings import error_status
from .settings import Decision, RetrieverMode
from .types import Answer

logger = logging.getLogger(__name__)


class OpenAIMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(p.get("text", "") for p in self.content if p.get("type") == "text")
        return self.content or ""


class ChatCompletionRequest(BaseModel):
    """OpenAI chat-completions request; `top_k`, `decisions`, `retriever` may come as extra body fields."""

    model_config = ConfigDict(extra="allow")

    model: str | None = None
    messages: list[OpenAIMessage] = Field(min_length=1)
    stream: bool = False
    top_k: int | None = None
    decisions: list[Decision] | None = None
    retriever: RetrieverMode | None = None


def openai_to_ask(body: ChatCompletionRequest) -> AskRequest:
    """The native request for an OpenAI one: the last user message is the question."""
    turns = [m for m in body.messages if m.role in ("user", "assistant")]
    if not turns or turns[-1].role != "user":
        raise InvalidRequestError("the last message must come from the user")
    history = [ChatTurn(role=m.role, content=m.text()) for m in turns[:-1]]  # type: ignore[arg-type]
    return AskRequest(
        question=turns[-1].text(),
        history=history,
        top_k=body.top_k,
        decisions=body.decisions,
        retriever=body.retriever,
    )


def completion_text(answer: Answer) -> str:
    """The answer followed by its reference list, as an OpenAI client shows it."""
    return answer.to_markdown()


def _chunk(
    cid: str, created: int, model: str, delta: dict[str, Any], finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def _model_card(name: str, created: int) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": created, "owned_by": "iclr-rag"}


def _completion(api: Api, req: AskRequest, cid: str, created: int, name: str) -> dict[str, Any]:
    answer = api.answer(req)
    return {
        "id": cid,
        "object": "chat.completion",
        "created": created,
        "model": name,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": completion_text(answer)},
            }
        ],
        "usage": {
            "prompt_tokens": 0,
            "completion_tokens": answer.completion_tokens or 0,
            "total_tokens": answer.completion_tokens or 0,
        },
        "citations": [c.model_dump(mode="json") for c in answer.citations],
        "answer": answer.model_dump(mode="json"),
    }


def _completion_chunks(
    head: list[dict[str, Any]], events: Iterator[dict[str, Any]], cid: str, created: int, name: str
) -> Iterator[str]:
    flt = LiveMarkerFilter([])
    try:
        yield sse(_chunk(cid, created, name, {"role": "assistant", "content": ""}))
        for ev in chain_events(head, events):
            if ev["type"] == "sources":
                flt = LiveMarkerFilter([s.number for s in ev["sources"]])
            elif ev["type"] == "token":
                text = flt.feed(ev["text"])
                if text:
                    yield sse(_chunk(cid, created, name, {"content": text}))
            elif ev["type"] == "answer":
                answer: Answer = ev["answer"]
                tail = flt.flush()
                refs = answer.references_markdown()
                note = answer.removal_note()
                tail += f"\n\n_{note}_" if note else ""
                tail += f"\n\n**References**\n\n{refs}" if refs else ""
                if tail:
                    yield sse(_chunk(cid, created, name, {"content": tail}))
                yield sse(
                    _chunk(
                        cid,
                        created,
                        name,
                        {},
                        "stop",
                        citations=[c.model_dump(mode="json") for c in answer.citations],
                        answer=answer.model_dump(mode="json"),
                    )
                )
        yield sse("[DONE]")
    except RagError as exc:
        status, kind = error_status(exc)
        yield sse({"error": {"type": kind, "message": str(exc), "code": status}})
    finally:
        close_events(events)


def add_openai_routes(app: Any, api: Api, dependencies: list[Any], responses: dict[int | str, Any]) -> None:
    """Register /v1/models, /v1/models/{model_id} and /v1/chat/completions on `app`."""
    from fastapi.responses import StreamingResponse
    from starlette.exceptions import HTTPException as StarletteHTTPException

    cfg = api.cfg

    @app.get("/v1/models", tags=["openai"], dependencies=dependencies)
    def models() -> dict[str, Any]:
        """The one model this server offers (OpenAI format)."""
        return {"object": "list", "data": [_model_card(cfg.model_name, api.started)]}

    @app.get("/v1/models/{model_id}", tags=["openai"], dependencies=dependencies)
    def model(model_id: str) -> dict[str, Any]:
        if model_id != cfg.model_name:
            raise StarletteHTTPException(404, f"no model {model_id!r}; this server offers {cfg.model_name!r}")
        return _model_card(cfg.model_name, api.started)

    @app.post("/v1/chat/completions", tags=["openai"], dependencies=dependencies, responses=responses)
    def chat_completions(body: ChatCompletionRequest) -> Any:
        """OpenAI-compatible chat; the answer ends with its reference list, and the response carries
        `citations` (list of Citation) and `answer` (the full Answer) as extra fields."""
        req = openai_to_ask(body)
        cid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        created = int(time.time())
        name = cfg.model_name
        if not body.stream:
            return _completion(api, req, cid, created, name)
        head, events = api.primed(req)
        return StreamingResponse(
            _completion_chunks(head, events, cid, created, name),
            media_type="text/event-stream",
            headers=stream_headers(),
        )
