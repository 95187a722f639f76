"""The OpenAI-compatible API: /v1/models and /v1/chat/completions (with and without streaming).

Responses are built from the `openai` package's own types (ChatCompletion, ChatCompletionChunk,
Model), so they are what an OpenAI client parses; `citations` and `answer` ride as extra fields.
"""

import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Annotated, Any, Literal

from openai.types import CompletionUsage, Model
from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionMessage
from openai.types.chat.chat_completion import Choice
from openai.types.chat.chat_completion_chunk import Choice as ChunkChoice
from openai.types.chat.chat_completion_chunk import ChoiceDelta
from pydantic import BaseModel, ConfigDict, Field

from rag.errors import GenerationCancelled, InvalidRequestError, RagError
from rag.events import Event, Final, Queued, Sources, Token
from rag.limits import Limits
from rag.serve.api import (
    Api,
    AskRequest,
    HistoryTurn,
    RequestOptions,
    chain_events,
    close_events,
    sse,
    stream_headers,
)
from rag.serve.errors import error_event, error_responses
from rag.serve.streaming import cancellable_stream, stream_failed
from rag.text.citations import LiveMarkerFilter
from rag.types import Answer, Citation

if TYPE_CHECKING:
    from fastapi import FastAPI

logger = logging.getLogger(__name__)


# Messages are strict (no type coercion) and open (other OpenAI fields such as `name` are accepted
# and ignored). Text is a string or a list of text parts; a `tool` message or an image part is a 400.
_MESSAGE = ConfigDict(extra="allow", strict=True)


class TextPart(BaseModel):
    model_config = _MESSAGE

    type: Literal["text"]
    text: str


def _joined(content: str | list[TextPart] | None) -> str:
    if isinstance(content, list):
        return "".join(part.text for part in content)
    return content or ""


class SystemMessage(BaseModel):
    """Instructions for the model: accepted and ignored (the server's own prompt applies)."""

    model_config = _MESSAGE

    role: Literal["system", "developer"]
    content: str | list[TextPart]


class UserMessage(BaseModel):
    """A question: at least one non-space character, at most RAG_SERVER__MAX_QUESTION_CHARS."""

    model_config = _MESSAGE

    role: Literal["user"]
    content: str | list[TextPart]

    def text(self) -> str:
        return _joined(self.content)


class AssistantMessage(BaseModel):
    """An earlier answer (its reference list lets "the second one" resolve to a paper)."""

    model_config = _MESSAGE

    role: Literal["assistant"]
    content: str | list[TextPart] | None = None

    def text(self) -> str:
        return _joined(self.content)


OpenAIMessage = Annotated[SystemMessage | UserMessage | AssistantMessage, Field(discriminator="role")]


class ChatCompletionRequest(RequestOptions):
    """OpenAI chat-completions request. The question is the last user message; the user and
    assistant messages before it are the history (the most recent that fit RAG_SERVER__MAX_HISTORY_*
    are kept); system/developer messages, messages after the question and the sampling fields
    (`temperature`, `max_tokens`, ...) are ignored. `top_k`, `decisions` and `retriever` may come as
    extra body fields."""

    model_config = ConfigDict(extra="allow", strict=True)

    model: str | None = Field(default=None, description="Any name; the server answers as RAG_SERVER__MODEL_NAME.")
    messages: list[OpenAIMessage] = Field(min_length=1, description="The conversation; at least one user message.")
    stream: bool | None = Field(default=False, description="Send chat.completion.chunk server-sent events.")


def openai_to_ask(body: ChatCompletionRequest, limits: Limits) -> AskRequest:
    """The native request for an OpenAI one: the last user message is the question, the user and
    assistant messages before it the history (its most recent messages within `limits`).

    Every user message must be a question within the limits and no assistant message may exceed the
    history's characters, as the OpenAPI schema states for each message."""
    for i, m in enumerate(body.messages):
        if isinstance(m, UserMessage):
            text = m.text()
            if not text.strip():
                raise InvalidRequestError(f"messages.{i}: the user message is empty")
            if len(text) > limits.question_chars:
                raise InvalidRequestError(
                    f"messages.{i}: the user message has {len(text)} characters; "
                    f"the limit is {limits.question_chars}"
                )
        elif isinstance(m, AssistantMessage) and len(m.text()) > limits.history_chars:
            raise InvalidRequestError(
                f"messages.{i}: the assistant message has {len(m.text())} characters; "
                f"the limit is {limits.history_chars}"
            )
    turns = [m for m in body.messages if isinstance(m, (UserMessage, AssistantMessage))]
    last = max((i for i, m in enumerate(turns) if isinstance(m, UserMessage)), default=None)
    if last is None:
        raise InvalidRequestError("no user message: the question is the last message from the user")
    history: list[HistoryTurn] = []
    chars = 0
    for m in reversed(turns[:last]):
        text = m.text()
        if len(history) + 1 > limits.history_messages or chars + len(text) > limits.history_chars:
            break
        history.insert(0, HistoryTurn(role=m.role, content=text))
        chars += len(text)
    return AskRequest(
        question=turns[last].text(),
        history=history,
        top_k=body.top_k,
        decisions=body.decisions,
        retriever=body.retriever,
        show_all=body.show_all,
    )


class RagChatCompletion(ChatCompletion):
    """An OpenAI chat completion with the answer's `citations` and the full `answer`."""

    citations: list[Citation]
    answer: Answer


class ModelList(BaseModel):
    object: Literal["list"]
    data: list[Model]


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
) -> AsyncIterator[str]:
    """The OpenAI stream of chunks; a client that goes away stops the generation (rag.serve.streaming)."""
    return cancellable_stream(_chunk_lines(head, events, cid, created, name))


def _chunk_lines(head: list[Event], events: Iterator[Event], cid: str, created: int, name: str) -> Iterator[str]:
    flt = LiveMarkerFilter([])
    try:
        yield sse(_chunk(cid, created, name, ChoiceDelta(role="assistant", content="")))
        for ev in chain_events(head, events):
            if isinstance(ev, Queued):
                # An SSE comment: OpenAI clients skip it; others can show the place in line.
                yield f": queued {json.dumps(ev.model_dump(mode='json', exclude={'type'}))} {ev.message}\n\n"
            elif isinstance(ev, Sources):
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
    except GenerationCancelled:
        return  # nobody is listening any more
    except RagError as exc:
        stream_failed(exc)
        body = error_event(exc)
        body["error"]["code"] = body["error"].pop("status")
        yield sse(body)
    finally:
        close_events(events)


def add_openai_routes(app: "FastAPI", api: Api, dependencies: list[Any], responses: dict[int | str, Any]) -> None:
    """Register /v1/models, /v1/models/{model_id} and /v1/chat/completions on `app`; `responses`
    are the error responses of the answering route, `dependencies` the API-key check (if any)."""
    from fastapi.responses import StreamingResponse
    from starlette.exceptions import HTTPException as StarletteHTTPException

    cfg = api.cfg

    @app.get(
        "/v1/models",
        tags=["openai"],
        dependencies=dependencies,
        response_model=ModelList,
        responses=error_responses(auth=bool(dependencies)),
    )
    def models() -> dict[str, Any]:
        """The one model this server offers (OpenAI format)."""
        return {"object": "list", "data": [_model_card(cfg.model_name, api.started)]}

    @app.get(
        "/v1/models/{model_id}",
        tags=["openai"],
        dependencies=dependencies,
        response_model=Model,
        responses=error_responses(404, auth=bool(dependencies)),
    )
    def model(model_id: str) -> dict[str, Any]:
        """The model `model_id` (OpenAI format): 404 unless it is RAG_SERVER__MODEL_NAME."""
        if model_id != cfg.model_name:
            raise StarletteHTTPException(404, f"no model {model_id!r}; this server offers {cfg.model_name!r}")
        return _model_card(cfg.model_name, api.started)

    completion_responses: dict[int | str, Any] = {
        200: {
            "model": RagChatCompletion,
            "description": "A chat.completion (JSON), or with `stream` chat.completion.chunk server-sent "
            "events ending with `data: [DONE]` (or an error object).",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        **responses,
    }

    @app.post(
        "/v1/chat/completions",
        tags=["openai"],
        dependencies=dependencies,
        responses=completion_responses,
    )
    def chat_completions(body: ChatCompletionRequest) -> Any:
        """OpenAI-compatible chat; the answer ends with its reference list, and the response carries
        `citations` (list of Citation) and `answer` (the full Answer) as extra fields."""
        req = openai_to_ask(body, api.limits)
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
