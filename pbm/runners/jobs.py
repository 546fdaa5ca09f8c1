"""A periodic job (pbm.app.PERIODIC_JOBS) run every `every_seconds`, by one daemon of
a cluster per due time (pbm.jobs.run_for_cluster); each run is logged (`event=job_ran`)
with what it did, at DEBUG when it did nothing."""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.engine import Engine

from pbm.clock import Clock
from pbm.config import Config
from pbm.jobs import PeriodicJob, did, run_for_cluster
from pbm.logfmt import kv
from pbm.runners.base import Runner, Signals, wait
from pbm.store.failures import classify, describe_failure

log = logging.getLogger("pbm.daemon")


class JobRunner(Runner):
    def __init__(
        self, signals: Signals, job: PeriodicJob, engine: Engine, clock: Clock, config: Config
    ) -> None:
        super().__init__(signals)
        self.job = job
        self.name = job.name
        self.engine = engine
        self.clock = clock
        self.config = config

    async def run(self) -> None:
        job, stop = self.job, self.signals.stop
        while not stop.is_set():
            try:
                done = await asyncio.to_thread(
                    run_for_cluster,
                    self.engine,
                    self.clock,
                    self.config,
                    job.name,
                    job.every_seconds,
                    job.run,
                )
                if done is not None:  # which daemon ran which due time, and what it did
                    counts = did(done)
                    # an idle server's runs, every few minutes, would fill the log
                    level = logging.INFO if counts else logging.DEBUG
                    log.log(level, kv("job_ran", job=job.name, **counts))
            except Exception as exc:
                if not classify(exc).temporary:
                    log.exception(kv("job_failed", job=job.name, error=repr(exc)))
                else:  # due work is still due next time
                    log.warning(
                        kv("job_store_unavailable", job=job.name, error=describe_failure(exc))
                    )
            await wait(stop, job.every_seconds)
