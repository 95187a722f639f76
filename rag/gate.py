"""The generation gate: at most N answers are generated at once, a bounded line waits for a slot.

The chat UI and the HTTP APIs of one server share one gate, so the LLM's concurrency
(RAG_LLM__MAX_CONCURRENT or RAG_SERVER__SLOTS) holds across all of them.

A generation whose caller goes away stops too (`Cancellable`): the answer loop calls
`check_cancelled()` between the model's tokens, and the stream's generators are closed, which gives
the slot back.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator
from typing import Any

from .errors import BusyError, GenerationCancelled


class GenerationGate:
    """At most `slots` generations at once and `max_waiting` callers in line; the rest are refused."""

    def __init__(self, slots: int = 1, max_waiting: int = 16, timeout: float = 120.0):
        self.slots = slots
        self.max_waiting = max_waiting
        self.timeout = timeout
        self._sem = threading.BoundedSemaphore(slots)
        self._lock = threading.Lock()
        self._waiting = 0
        self._running = 0

    def stats(self) -> dict[str, int]:
        """Generations running and callers waiting right now."""
        with self._lock:
            return {
                "running": self._running,
                "waiting": self._waiting,
                "slots": self.slots,
                "max_waiting": self.max_waiting,
            }

    def check(self) -> None:
        """Raise BusyError now if a new caller could not even join the line."""
        with self._lock:
            if self._running >= self.slots and self._waiting >= self.max_waiting:
                raise BusyError(
                    f"the server is busy ({self._waiting} requests waiting); try again shortly",
                    queue_full=True,
                )

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one generation slot, waiting in line up to `timeout` seconds."""
        with self._lock:
            if not self._sem.acquire(blocking=False):
                if self._waiting >= self.max_waiting:
                    raise BusyError(
                        f"the server is busy ({self._waiting} requests waiting); try again shortly",
                        queue_full=True,
                    )
                self._waiting += 1
                acquired = False
            else:
                acquired = True
        if not acquired:
            try:
                acquired = self._sem.acquire(timeout=self.timeout)
            finally:
                with self._lock:
                    self._waiting -= 1
            if not acquired:
                raise BusyError(
                    f"no generation slot became free within {self.timeout:.0f}s; try again shortly",
                    queue_full=False,
                )
        with self._lock:
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1
            self._sem.release()


# -- stopping a generation whose caller went away -------------------------------------------------
_CANCEL: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("rag_cancel", default=None)


def check_cancelled() -> None:
    """Raise GenerationCancelled when the stream being generated was cancelled (see `Cancellable`);
    the answer loop calls it between the model's tokens. Outside a `Cancellable` it does nothing."""
    event = _CANCEL.get()
    if event is not None and event.is_set():
        raise GenerationCancelled("the caller went away; the answer was not finished")


class Cancellable:
    """Steps through a stream of events (or of lines made from them) from any thread, and stops it.

    Each `step()` runs in a context where `check_cancelled()` sees this stream's flag. `cancel()`
    sets the flag and closes the stream: at once when no step is running, else as soon as the
    running step returns (the model stops at its next token). Closing runs the stream's `finally`
    blocks, so its generation slot is given back.
    """

    def __init__(self, stream: Iterator[Any]):
        self.stream = stream
        self.cancelled = threading.Event()
        self._context = contextvars.copy_context()
        self._context.run(_CANCEL.set, self.cancelled)
        self._lock = threading.Lock()
        self._running = False
        self._closed = False

    def step(self, default: Any) -> Any:
        """The next item, or `default` when the stream is over or cancelled."""
        with self._lock:
            if self._closed or self.cancelled.is_set():
                return default
            self._running = True
        try:
            return self._context.run(next, self.stream, default)
        finally:
            with self._lock:
                self._running = False
                close = self.cancelled.is_set()
            if close:
                self._close()

    def cancel(self) -> None:
        """Stop the stream (idempotent; a finished stream is just closed)."""
        self.cancelled.set()
        with self._lock:
            running = self._running
        if not running:
            self._close()

    def _close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        close = getattr(self.stream, "close", None)
        if close is not None:
            self._context.run(close)
