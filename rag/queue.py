"""The generation queue: at most N answers are generated at once; the others wait in a FIFO line.

The chat UI and the HTTP APIs of one server share one queue, so the LLM's concurrency
(RAG_LLM__MAX_CONCURRENT or RAG_SERVER__SLOTS) holds across all of them.

Everyone the line accepts is served in arrival order: a newcomer is refused at once (BusyError,
429) when the line is full or when its estimated wait exceeds `timeout`, rather than accepted and
timed out later. While waiting, a caller sees its place and estimated wait (`Place.wait` yields a
`QueueStatus` whenever they change); the estimate is the line ahead times the mean time a slot was
held lately. A caller that goes away (`Cancellable`, or closing the generator) leaves the line.

A generation whose caller goes away stops too (`Cancellable`): the answer loop calls
`check_cancelled()` between the model's tokens, and the stream's generators are closed, which gives
the slot back.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from rag.errors import BusyError, GenerationCancelled

POLL_SECONDS = 0.25  # how often a waiter looks at its cancel flag (and the line) while waiting
SERVICE_SMOOTHING = 0.3  # weight of the newest slot time in the running mean


@dataclass(frozen=True)
class QueueStatus:
    """A waiting caller's place: `ahead` callers are served before it (waiting or being served
    now, 0: it is next), in about `eta_s` seconds (None until a slot time has been measured)."""

    ahead: int
    eta_s: float | None

    def message(self) -> str:
        """'2 questions ahead of you, ~12 s', as the UI shows it."""
        ahead = f"{self.ahead} question{'s' if self.ahead != 1 else ''} ahead of you"
        return ahead + (f", ~{max(1, round(self.eta_s))} s" if self.eta_s is not None else "")


class Place:
    """One caller's place in the line (from `GenerationQueue.place`)."""

    def __init__(self, queue: GenerationQueue):
        self.queue = queue
        self.granted = False
        self.ready = threading.Event()
        self.joined = time.monotonic()
        self.started: float | None = None
        self.timed = True  # False: this turn's slot time says nothing of answer times (a cache hit)

    def wait(self) -> Iterator[QueueStatus]:
        """Wait for a slot: yields the caller's `QueueStatus` whenever it changes (nothing when a
        slot is free at once) and returns holding the slot. BusyError after `timeout` seconds;
        GenerationCancelled when the caller's stream was cancelled (it leaves the line)."""
        queue = self.queue
        deadline = self.joined + queue.timeout
        last: QueueStatus | None = None
        while not self.ready.is_set():
            check_cancelled()
            status = queue.status(self)
            if status is not None and status != last:
                last = status
                yield status
            left = deadline - time.monotonic()
            if left <= 0:
                raise BusyError(
                    f"no generation slot became free within {queue.timeout:.0f}s; try again shortly",
                    queue_full=False,
                )
            self.ready.wait(min(POLL_SECONDS, left))


class GenerationQueue:
    """At most `slots` generations at once; at most `max_waiting` callers wait, first come first
    served; a caller whose estimated wait exceeds `timeout` seconds is refused at once."""

    def __init__(
        self, slots: int = 1, max_waiting: int = 64, timeout: float = 600.0,
        on_idle: Callable[[], None] | None = None,
    ):
        self.slots = slots
        self.on_idle = on_idle  # called (outside the lock) when the last caller in line leaves
        self.max_waiting = max_waiting
        self.timeout = timeout
        self._lock = threading.Lock()
        self._line: deque[Place] = deque()
        self._running = 0
        self._service: float | None = None  # running mean of seconds a slot is held

    def stats(self) -> dict[str, Any]:
        """Generations running and callers waiting right now, and the mean slot time."""
        with self._lock:
            return {
                "running": self._running,
                "waiting": len(self._line),
                "slots": self.slots,
                "max_waiting": self.max_waiting,
                "mean_answer_s": round(self._service, 3) if self._service is not None else None,
            }

    def _eta(self, ahead: int) -> float | None:
        """Seconds until a caller with `ahead` callers before it (waiting or served) gets a slot."""
        if self._service is None:
            return None
        return (ahead + 1 - self.slots) / self.slots * self._service if ahead >= self.slots else 0.0

    def _refusal(self) -> BusyError | None:
        """Why a newcomer can't join the line now (caller holds the lock), or None."""
        if self._running < self.slots and not self._line:
            return None
        waiting = len(self._line)
        if waiting >= self.max_waiting:
            return BusyError(
                f"the server is busy ({waiting} requests waiting); try again shortly", queue_full=True
            )
        eta = self._eta(self._running + waiting)
        if eta is not None and eta > self.timeout:
            return BusyError(
                f"the server is busy (about {eta:.0f}s of waiting ahead); try again shortly",
                queue_full=True,
            )
        return None

    def check(self) -> None:
        """Raise BusyError now if a new caller could not even join the line."""
        with self._lock:
            refusal = self._refusal()
        if refusal is not None:
            raise refusal

    def status(self, place: Place) -> QueueStatus | None:
        """A waiting place's position and estimated wait (None once it holds a slot)."""
        with self._lock:
            if place.granted:
                return None
            try:
                ahead = self._line.index(place) + self._running
            except ValueError:
                return None
            return QueueStatus(ahead=ahead, eta_s=self._eta(ahead))

    @contextlib.contextmanager
    def place(self) -> Iterator[Place]:
        """Join the line (BusyError when it is full); `Place.wait()` then waits for the slot. On
        exit the caller leaves the line, or gives its slot to the next in line."""
        place = Place(self)
        with self._lock:
            refusal = self._refusal()
            if refusal is not None:
                raise refusal
            self._line.append(place)
            self._grant()
        try:
            yield place
        finally:
            with self._lock:
                if place.granted:
                    self._running -= 1
                    held = time.monotonic() - (place.started or place.joined)
                    if place.timed:
                        self._service = held if self._service is None else (
                            SERVICE_SMOOTHING * held + (1 - SERVICE_SMOOTHING) * self._service
                        )
                else:
                    with contextlib.suppress(ValueError):
                        self._line.remove(place)
                self._grant()
                idle = self._running == 0 and not self._line
            if idle and self.on_idle is not None:
                self.on_idle()

    def _grant(self) -> None:
        """Hand free slots to the head of the line (caller holds the lock)."""
        while self._line and self._running < self.slots:
            head = self._line.popleft()
            head.granted = True
            head.started = time.monotonic()
            self._running += 1
            head.ready.set()

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one generation slot, waiting in line up to `timeout` seconds."""
        with self.place() as place:
            for _ in place.wait():
                pass
            yield


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
