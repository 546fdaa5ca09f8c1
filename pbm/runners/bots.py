"""The bots: think about the due moves in a pool of at most `[bots] workers` worker
processes (intake and the outbox never wait on thinking), then apply each answer in its
own unit of work. A board is thought about by one worker at a time here; daemons
sharing a PostgreSQL database may think about the same move, and the move-number check
when applying lets only the first answer count."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import TypeVar

from sqlalchemy.engine import Engine

from pbm.app import register
from pbm.clock import Clock
from pbm.config import Config
from pbm.jobs import apply_bot_answer, bot_task, due_bot_turns
from pbm.logfmt import kv
from pbm.mailstore import WriteLock
from pbm.runners.base import IDLE_TICK_SECONDS, Runner, Signals, wait
from pbm.services.play.bots import Answer, BotQueue, think
from pbm.store.failures import classify, describe_failure, unavailable_on_failure

T = TypeVar("T")
log = logging.getLogger("pbm.daemon")


class Bots(Runner):
    name = "bots"

    def __init__(
        self,
        signals: Signals,
        engine: Engine,
        clock: Clock,
        config: Config,
        write_lock: WriteLock,
    ) -> None:
        super().__init__(signals)
        self.engine = engine
        self.clock = clock
        self.config = config
        self.write_lock = write_lock

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        workers = self.config.bot_workers
        # spawn: the daemon has threads, and a forked child would inherit their locks.
        # A spawned worker imports pbm afresh, so it registers the games first (pbm.app).
        pool = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn"), initializer=register
        )
        thinking: dict[asyncio.Future[Answer], int] = {}  # an answer to come: its board
        queue = BotQueue()  # round robin over the players waiting
        stop = self.signals.stop
        try:
            while not stop.is_set():
                try:
                    await self._start_thinking(loop, pool, thinking, queue)
                except Exception as exc:
                    _failure("bots_read_failed", exc)
                if not thinking:
                    await wait(stop, IDLE_TICK_SECONDS)
                    continue
                done, _ = await asyncio.wait(
                    thinking, timeout=IDLE_TICK_SECONDS, return_when=asyncio.FIRST_COMPLETED
                )
                for future in done:
                    thinking.pop(future)
                    try:
                        answer = future.result()
                        result = await asyncio.to_thread(self._apply, answer)
                    except Exception as exc:
                        _failure("bot_move_failed", exc)
                        continue
                    log.info(kv("bot", board=answer.task.turn.game_id, result=result))
                    self.signals.outbox.set()
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    async def _start_thinking(
        self,
        loop: asyncio.AbstractEventLoop,
        pool: ProcessPoolExecutor,
        thinking: dict[asyncio.Future[Answer], int],
        queue: BotQueue,
    ) -> None:
        if len(thinking) >= self.config.bot_workers:
            return
        turns = await asyncio.to_thread(self._locked, due_bot_turns)
        for turn in queue.order(turns):
            if len(thinking) >= self.config.bot_workers:
                return
            if turn.game_id in thinking.values():
                continue
            task = await asyncio.to_thread(self._locked, partial(bot_task, turn=turn))
            if task is not None:
                queue.served(turn)
                thinking[loop.run_in_executor(pool, think, task)] = turn.game_id

    def _locked(self, read: Callable[[Engine, Clock, Config], T]) -> T:
        """A read of the bots' work under the daemon's write lock, as every transaction
        of this process on SQLite (see pbm.mailstore)."""
        with self.write_lock, unavailable_on_failure():
            return read(self.engine, self.clock, self.config)

    def _apply(self, answer: Answer) -> str:
        with self.write_lock, unavailable_on_failure():
            return apply_bot_answer(self.engine, self.clock, self.config, answer)


def _failure(event: str, exc: Exception) -> None:
    if not classify(exc).temporary:
        log.exception(kv(event, error=repr(exc)))
    else:  # the move is still due, and is thought again
        log.warning(kv(event, error=describe_failure(exc)))
