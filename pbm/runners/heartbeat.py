"""The heartbeat: renews the daemon's claims, reads the store's counts, writes the
status file every STATUS_SECONDS and logs a health line now and then."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from pbm.logfmt import kv
from pbm.runners.base import Runner, Signals, wait

log = logging.getLogger("pbm.daemon")

STATUS_SECONDS = 1.0
COUNTS_SECONDS = 5.0
# How often the heartbeat renews the daemon's claims: well inside claims.LEASE.
HEARTBEAT_SECONDS = 5.0


class Heartbeat(Runner):
    name = "reporter"

    def __init__(
        self,
        signals: Signals,
        *,
        beat: Callable[[], None],
        counts: Callable[[], dict[str, dict[str, int]]],
        write_status: Callable[[str], None],
        health_line: Callable[[], str],
        health_seconds: float,
    ) -> None:
        super().__init__(signals)
        self.beat = beat
        self.counts = counts
        self.write_status = write_status
        self.health_line = health_line
        self.health_seconds = health_seconds
        self.last_counts: dict[str, dict[str, int]] = {}  # the store's, as last read

    async def run(self) -> None:
        stop = self.signals.stop
        last_health = last_counts = last_beat = time.monotonic()
        counts_failing = beat_failing = False
        while not stop.is_set():
            await wait(stop, STATUS_SECONDS)
            if stop.is_set():
                break
            now = time.monotonic()
            if now - last_beat >= HEARTBEAT_SECONDS:
                last_beat = now
                try:
                    await asyncio.to_thread(self.beat)
                    beat_failing = False
                except Exception as exc:
                    if not beat_failing:
                        log.warning(kv("heartbeat_failed", error=repr(exc)))
                    beat_failing = True
            if now - last_counts >= COUNTS_SECONDS or not self.last_counts:
                last_counts = now
                try:
                    self.last_counts = await asyncio.to_thread(self.counts)
                    counts_failing = False
                except Exception as exc:
                    if not counts_failing:  # once per streak: the store may be away a while
                        log.warning(kv("counts_failed", error=repr(exc)))
                    counts_failing = True
            self.write_status("running")
            if now - last_health >= self.health_seconds:
                last_health = now
                log.info(self.health_line())
