"""The web pages, feeds, one-click links and metrics (pbm.web) on the daemon's loop:
its POSTs take the daemon's write lock and wake its sender."""

from __future__ import annotations

import asyncio
from contextlib import AbstractContextManager
from typing import Any

from sqlalchemy.engine import Engine

from pbm.clock import Clock
from pbm.config import Config
from pbm.runners.base import Runner, Signals
from pbm.web.server import serve


class Web(Runner):
    name = "web"

    def __init__(
        self,
        signals: Signals,
        config: Config,
        engine: Engine,
        clock: Clock,
        lock: AbstractContextManager[Any],
    ) -> None:
        super().__init__(signals)
        self.config, self.engine, self.clock, self.lock = config, engine, clock, lock

    async def run(self) -> None:
        loop = asyncio.get_running_loop()

        def wake() -> None:  # from the web's worker threads, hence through the loop
            loop.call_soon_threadsafe(self.signals.outbox.set)

        await serve(
            self.config,
            self.signals.stop,
            engine=self.engine,
            clock=self.clock,
            lock=self.lock,
            wake=wake,
        )
