"""The processor: runs the stored messages, a few at a time, each in its own unit of
work (pbm.mailstore.DbInbox → pbm.intake), and wakes the sender for their replies."""

from __future__ import annotations

import asyncio
import logging
import threading

from pbm.logfmt import kv
from pbm.mailstore import DbInbox
from pbm.runners.base import IDLE_TICK_SECONDS, Runner, Signals, wait
from pbm.runners.counters import Counters

log = logging.getLogger("pbm.daemon")

PROCESS_CHUNK = 10
# While the store is unavailable the processor waits this long, doubling up to the max.
STORE_BACKOFF_SECONDS = 1.0
STORE_BACKOFF_MAX_SECONDS = 30.0


class Processor(Runner):
    name = "processor"

    def __init__(
        self, signals: Signals, inbox: DbInbox, counters: Counters, thread_stop: threading.Event
    ) -> None:
        super().__init__(signals)
        self.inbox = inbox
        self.counters = counters
        self.thread_stop = thread_stop

    def stop(self) -> None:
        self.thread_stop.set()
        self.signals.process.set()

    async def run(self) -> None:
        stop, wake = self.signals.stop, self.signals.process
        loop = asyncio.get_running_loop()

        def processed() -> None:  # from the worker thread, hence through the loop
            loop.call_soon_threadsafe(self.signals.outbox.set)

        backoff = 0.0
        while not stop.is_set():
            await wait(wake, IDLE_TICK_SECONDS)
            wake.clear()
            if stop.is_set():
                break
            try:
                # the sender is woken after each message: its replies go out while
                # later messages are still processed
                result = await asyncio.to_thread(
                    self.inbox.process_some, self.thread_stop, PROCESS_CHUNK, processed
                )
            except Exception as exc:
                log.exception(kv("process_error", error=repr(exc)))
                continue
            if result.unavailable is not None:
                # the store is locked, full or gone: the messages wait, and so do we
                if not backoff:
                    log.warning(kv("process_store_unavailable", error=result.unavailable))
                backoff = min(backoff * 2 or STORE_BACKOFF_SECONDS, STORE_BACKOFF_MAX_SECONDS)
                await wait(stop, backoff)
            elif backoff:
                backoff = 0.0
                log.info(kv("process_store_back"))
            if result.processed:
                self.counters.processed += result.processed
                for status, n in result.statuses.items():
                    self.counters.statuses[status] = self.counters.statuses.get(status, 0) + n
                log.info(kv("processed", count=result.processed, **result.statuses))
                wake.set()  # there may be more
