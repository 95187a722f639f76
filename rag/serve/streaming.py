"""Streaming a generated answer to an HTTP client, and stopping it when the client goes away.

The answer's events come from a synchronous generator (the model runs in its thread). Starlette
iterates a synchronous body in worker threads and, when the client disconnects, cancels the
response task, but the worker keeps generating until the model finishes, holding the generation
slot. `cancellable_stream` iterates the lines itself: each step runs in a worker thread that the
response task does not wait for once cancelled, and the cancellation stops the model at its next
token (`rag.queue.check_cancelled`) and closes the generators, which frees the slot.
"""

import logging
from collections.abc import AsyncIterator, Iterator

from rag.errors import RagError, describe, redact_secrets
from rag.queue import Cancellable

logger = logging.getLogger(__name__)

_END = object()


async def cancellable_stream(lines: Iterator[str]) -> AsyncIterator[str]:
    """`lines`, each made in a worker thread; stopping early (the client went away, the server
    shuts down) cancels the generation behind them."""
    import anyio.to_thread

    stream = Cancellable(lines)
    try:
        while True:
            line = await anyio.to_thread.run_sync(stream.step, _END, abandon_on_cancel=True)
            if line is _END:
                return
            yield line
    finally:
        stream.cancel()


def stream_failed(exc: RagError) -> None:
    """Log an error that ends a stream: the client gets only its public message, in the stream."""
    if describe(exc).status >= 500:
        logger.warning("stream ended by %s: %s", type(exc).__name__, redact_secrets(str(exc)))
