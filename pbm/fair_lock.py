"""A lock that goes to its waiters in the order they asked for it.

The daemon's writers on SQLite (the processor, the sender recording what it sent, the
intake storing, the jobs) take turns on one lock. `threading.Lock` lets the thread that
releases it take it again at once, ahead of a waiter that the release only woke: the
processor, going from one message to the next, kept the sender's one-line record
waiting for several messages, and the sender, which records each mail before it sends
the next, sent that much slower. Here a release hands the lock straight to the longest
waiter, so a writer waits at most for the writers that were there before it.
"""

from __future__ import annotations

import threading
from collections import deque
from types import TracebackType


class FairLock:
    """A first-come, first-served lock, used as a context manager; not reentrant."""

    def __init__(self) -> None:
        self._guard = threading.Lock()  # over _held and _waiters, held for a moment only
        self._held = False
        self._waiters: deque[threading.Lock] = deque()

    @property
    def waiting(self) -> int:
        """How many threads wait for the lock now (a moment's count, as tests need it)."""
        with self._guard:
            return len(self._waiters)

    def __enter__(self) -> FairLock:
        with self._guard:
            if not self._held:
                self._held = True
                return self
            gate = threading.Lock()
            gate.acquire()
            self._waiters.append(gate)
        gate.acquire()  # opened by the holder that hands the lock over
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        with self._guard:
            if self._waiters:
                self._waiters.popleft().release()  # still held: now by that waiter
            else:
                self._held = False
