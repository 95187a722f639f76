"""The generation gate: at most N answers are generated at once, a bounded line waits for a slot.

The chat UI and the HTTP APIs of one server share one gate, so the LLM's concurrency
(RAG_LLM__MAX_CONCURRENT or RAG_SERVER__SLOTS) holds across all of them.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from .errors import BusyError


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


