"""The sender: drains the outbox whenever it is woken (or every idle tick)."""

from __future__ import annotations

import logging

from pbm.errors import StoreUnavailable
from pbm.logfmt import kv
from pbm.mail.smtp_out import OutboxSender
from pbm.runners.base import IDLE_TICK_SECONDS, Runner, Signals, wait

log = logging.getLogger("pbm.daemon")


class Sender(Runner):
    name = "outbox"

    def __init__(self, signals: Signals, sender: OutboxSender) -> None:
        super().__init__(signals)
        self.sender = sender

    def stop(self) -> None:
        self.signals.outbox.set()

    async def run(self) -> None:
        stop, wake = self.signals.stop, self.signals.outbox
        unavailable = False
        while True:
            await wait(wake, IDLE_TICK_SECONDS)
            wake.clear()
            if stop.is_set():
                break
            try:
                await self.sender.drain(stop)
                unavailable = False
            except StoreUnavailable as exc:
                # mail stays queued; the next tick tries again (logged once per streak)
                if not unavailable:
                    log.warning(kv("outbox_store_unavailable", error=exc))
                unavailable = True
            except Exception as exc:
                log.exception(kv("outbox_error", error=repr(exc)))
