"""The web pages (pbm.web) in a child process of the daemon: `pbm web` with the
daemon's settings, its priority lowered by `[web] nice`, so that pages under load never
take the CPU or the interpreter lock that mail needs. Started and stopped with the
daemon, restarted if it dies (a bounded number of times in a row; never when its port
cannot be bound: the pages stay off, mail goes on); a POST commits its
mail in the child and wakes the daemon's sender through a pipe."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from pbm.app import initialize
from pbm.config import Config
from pbm.errors import EX_CONFIG
from pbm.logfmt import kv, setup_logging
from pbm.runners.base import Runner, Signals, wait
from pbm.web.server import CannotListen, run

log = logging.getLogger("pbm.daemon")

RESTARTS = 5  # quick restarts in a row; the death after them leaves the pages off (logged)
STEADY_SECONDS = 60.0  # a child that served this long starts the count anew
RESTART_MAX_SECONDS = 30.0  # the longest wait before a restart (1, 2, 4, ... s)
CANNOT_LISTEN = EX_CONFIG  # the child's exit when a port is taken: no restart mends it
STOP_SECONDS = 15.0  # a child's graceful stop (uvicorn's takes at most 10 s), then a kill


def child_main(config: Config, daemon: Connection, log_level: str) -> None:
    """The child's life: pbm put together from the daemon's settings, then the pages
    until SIGTERM or until the daemon's end of `daemon` closes; CANNOT_LISTEN when a
    port cannot be bound (logged by pbm.web.server)."""
    initialize(config)
    setup_logging(log_level)
    sending = threading.Lock()  # POSTs run in the server's worker threads

    def wake() -> None:
        with sending, contextlib.suppress(OSError):
            daemon.send_bytes(b"outbox")

    try:
        run(config, wake=wake, parent=daemon.fileno())
    except CannotListen:
        sys.exit(CANNOT_LISTEN)


class Web(Runner):
    name = "web"

    def __init__(self, signals: Signals, config: Config) -> None:
        super().__init__(signals)
        self.config = config

    async def run(self) -> None:
        stop = self.signals.stop
        deaths = 0
        while not stop.is_set():
            began = time.monotonic()
            code = await self._child()
            if stop.is_set():
                break
            if code == CANNOT_LISTEN:  # the child logged web_cannot_listen, with the port
                log.error(kv("web_off", reason="cannot listen", exitcode=code))
                return
            deaths = 1 if time.monotonic() - began >= STEADY_SECONDS else deaths + 1
            if deaths > RESTARTS:
                log.error(kv("web_given_up", exitcode=code, deaths=deaths))
                return
            delay = min(2.0 ** (deaths - 1), RESTART_MAX_SECONDS)
            log.warning(kv("web_died", exitcode=code, restart_in=delay))
            await wait(stop, delay)

    async def _child(self) -> int | None:
        """Run one child until it exits or the daemon stops (then stop it): its exit code."""
        loop = asyncio.get_running_loop()
        ours, theirs = multiprocessing.Pipe()
        level = logging.getLevelName(logging.getLogger().getEffectiveLevel())
        # spawn: the daemon has threads, and a forked child would inherit their locks
        child = multiprocessing.get_context("spawn").Process(
            target=child_main, args=(self.config, theirs, level), name="pbm-web", daemon=True
        )
        await asyncio.to_thread(child.start)
        theirs.close()
        log.info(kv("web_child", pid=child.pid, nice=self.config.web_nice))
        exited: asyncio.Future[None] = loop.create_future()

        def ended() -> None:
            loop.remove_reader(child.sentinel)
            if not exited.done():
                exited.set_result(None)

        loop.add_reader(child.sentinel, ended)
        loop.add_reader(ours.fileno(), self._woken, loop, ours)
        try:
            stopping = asyncio.create_task(self.signals.stop.wait())
            either: list[asyncio.Future[Any]] = [exited, stopping]
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if not exited.done():
                child.terminate()
                try:
                    await asyncio.wait_for(asyncio.shield(exited), STOP_SECONDS)
                except TimeoutError:
                    child.kill()
                    await exited
        finally:
            loop.remove_reader(child.sentinel)
            loop.remove_reader(ours.fileno())
            ours.close()
        child.join()
        return child.exitcode

    def _woken(self, loop: asyncio.AbstractEventLoop, pipe: Connection) -> None:
        """The child committed mail: wake the sender (the pipe's end: the child is gone)."""
        try:
            while pipe.poll():
                pipe.recv_bytes()
        except (EOFError, OSError):
            loop.remove_reader(pipe.fileno())
        self.signals.outbox.set()
