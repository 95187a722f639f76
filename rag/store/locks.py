"""Locks between processes on a file (the `filelock` package), reentrant within a thread, that name
their holder: the store's write lock and the paper table's lock.

`filelock` takes the OS lock (flock) and counts a thread's nested holds; this module adds what the
messages need: the holder's pid, written beside the lock while it is held, and one log line when a
caller has to wait.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from filelock import FileLock, Timeout

logger = logging.getLogger(__name__)

POLL_S = 0.05


class LockBusy(Exception):
    """The lock stayed held by another process (or thread) for the whole timeout."""

    def __init__(self, holder: str):
        super().__init__(holder)
        self.holder = holder  # its pid as it wrote it, or "unknown"


class ProcessLock:
    """An exclusive lock on `path` between processes and between threads, reentrant in a thread."""

    def __init__(self, path: Path):
        self.path = path
        self.owner_path = path.with_name(path.name + ".pid")
        self._lock = FileLock(str(path), thread_local=True)

    def holder(self) -> str:
        """The pid the current holder wrote, or "unknown"."""
        try:
            return self.owner_path.read_text(encoding="ascii", errors="replace").strip() or "unknown"
        except OSError:
            return "unknown"

    @contextlib.contextmanager
    def hold(
        self, timeout: float, on_wait: Callable[[str], None] | None = None,
        busy: Callable[[str], Exception] = LockBusy,
    ) -> Iterator[bool]:
        """Hold the lock, waiting up to `timeout` seconds; yields whether this is the thread's outermost
        hold. `on_wait(holder)` is called once if the caller has to wait; after the timeout,
        `busy(holder)` is raised. An OSError (a read-only or missing directory) is raised as it is."""
        outermost = self._lock.lock_counter == 0
        if outermost:
            try:
                self._lock.acquire(timeout=0)
            except Timeout:
                if on_wait is not None:
                    on_wait(self.holder())
                try:
                    self._lock.acquire(timeout=timeout, poll_interval=POLL_S)
                except Timeout:
                    raise busy(self.holder()) from None
            with contextlib.suppress(OSError):  # who holds it, for the message a waiter prints
                self.owner_path.write_text(f"{os.getpid()}\n", encoding="ascii")
        else:
            self._lock.acquire()  # a nested hold of this thread: counted, never waits
        try:
            yield outermost
        finally:
            if outermost:
                with contextlib.suppress(OSError):
                    self.owner_path.unlink()
            self._lock.release()
