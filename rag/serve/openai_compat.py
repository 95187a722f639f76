"""The OpenAI-compatible API: /v1/models and /v1/chat/completions (with and without streaming).

Responses are built from the `openai` package's own types (ChatCompletion, ChatCompletionChunk,
Model), so they are what an OpenAI client parses; `citations` and `answer` ride as extra fields.
"""

import logging
import time
import uuid
from collections.abc import Iterator
from typing import Any, Literal

from openai.types import CompletionUsage, Model
from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionMessage
from openai.types.chat.chat_completion import Choice
from openai.types.chat.chat_completion_chunk import Choice as ChunkChoice
from openai.types.chat.chat_completion_chunk import ChoiceDelta
from pydantic import BaseModel, ConfigDict, Field

from rag.citations import LiveMarkerFilter
from rag.conversation import ChatTurn
from rag.errors import InvalidRequestError, RagError
from rag.events import Event, Final, Sources, Token
from rag.settings import Decision, RetrieverMode
from rag.types import Answer

from .api import Api, AskRequest, chain_events, close_events, sse, stream_headers
from .errors import error_event

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


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", exclude_unset=True)


def _chunk(
    cid: str, created: int, model: str, delta: ChoiceDelta, finish: Literal["stop"] | None = None, **extra: Any
) -> dict[str, Any]:
    chunk = ChatCompletionChunk(
        id=cid,
        object="chat.completion.chunk",
        created=created,
        model=model,
        choices=[ChunkChoice(index=0, delta=delta, finish_reason=finish)],
        **extra,
    )
    return _dump(chunk)


def _model_card(name: str, created: int) -> dict[str, Any]:
    return _dump(Model(id=name, object="model", created=created, owned_by="iclr-rag"))


def _completion(api: Api, req: AskRequest, cid: str, created: int, name: str) -> dict[str, Any]:
    answer = api.answer(req)
    tokens = answer.completion_tokens or 0
    completion = ChatCompletion(
        id=cid,
        object="chat.completion",
        created=created,
        model=name,
        choices=[
            Choice(
                index=0,
                finish_reason="stop",
                message=ChatCompletionMessage(role="assistant", content=completion_text(answer)),
            )
        ],
        usage=CompletionUsage(prompt_tokens=0, completion_tokens=tokens, total_tokens=tokens),
        citations=[c.model_dump(mode="json") for c in answer.citations],
        answer=answer.model_dump(mode="json"),
    )
    return _dump(completion)


def _completion_chunks(
    head: list[Event], events: Iterator[Event], cid: str, created: int, name: str
) -> Iterator[str]:
    flt = LiveMarkerFilter([])
    try:
        yield sse(_chunk(cid, created, name, ChoiceDelta(role="assistant", content="")))
        for ev in chain_events(head, events):
            if isinstance(ev, Sources):
                flt = LiveMarkerFilter([s.number for s in ev.sources])
            elif isinstance(ev, Token):
                text = flt.feed(ev.text)
                if text:
                    yield sse(_chunk(cid, created, name, ChoiceDelta(content=text)))
            elif isinstance(ev, Final):
                answer = ev.answer
                tail = flt.flush() + answer.tail_markdown()
                if tail:
                    yield sse(_chunk(cid, created, name, ChoiceDelta(content=tail)))
                yield sse(
                    _chunk(
                        cid,
                        created,
                        name,
                        ChoiceDelta(),
                        "stop",
                        citations=[c.model_dump(mode="json") for c in answer.citations],
                        answer=answer.model_dump(mode="json"),
                    )
                )
        yield sse("[DONE]")
    except RagError as exc:
        body = error_event(exc)
        body["error"]["code"] = body["error"].pop("status")
        yield sse(body)
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
