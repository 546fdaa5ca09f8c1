"""pbm on the web (docs/web.md): the pages, feeds and one-click links, and the
operator's /metrics and /healthz, served by uvicorn.

`run(config)` is a process of pages, at the priority `[web] nice` lowers it to:
`pbm web` runs it alone, and `pbm serve` runs it in a child process
(pbm.runners.web) when `[web] listen` is set. `serve(config, stop)` binds its ports
(CannotListen when one cannot be bound), then serves on a running loop until `stop`
is set."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
from collections.abc import Callable
from typing import Any

import uvicorn

from pbm.clock import SystemClock
from pbm.config import Config, Endpoint
from pbm.logfmt import kv
from pbm.store.engine import make_engine
from pbm.store.readonly import make_read_engine
from pbm.web.app import Reader, Writer, make_app
from pbm.web.metrics import metrics_app

log = logging.getLogger("pbm.web")


class CannotListen(Exception):
    """A port of the pages or the metrics cannot be bound (in use, not ours): a setup
    error, which serving again does not mend."""

    def __init__(self, where: str, endpoint: Endpoint, error: OSError) -> None:
        reason = os.strerror(error.errno) if error.errno else str(error)
        super().__init__(f"{where} {endpoint}: cannot listen there: {reason}")


def _bound(where: str, endpoint: Endpoint) -> socket.socket:
    """A listening socket on `endpoint`, bound here rather than by uvicorn, which logs a
    failed bind and exits the process (after `web_started`, for a restart that fails
    again)."""
    try:
        family, *_, address = socket.getaddrinfo(
            endpoint.host or None, endpoint.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        return socket.create_server(address, family=family)
    except OSError as exc:
        raise CannotListen(where, endpoint, exc) from exc


def _bound_all(config: Config) -> list[socket.socket]:
    """The sockets of the pages and the metrics, in that order (those configured); a
    port that cannot be bound is logged (`web_cannot_listen`) and raised."""
    wanted = [("[web] listen", config.web_listen), ("[web] metrics_listen", config.metrics_listen)]
    sockets: list[socket.socket] = []
    try:
        for where, endpoint in wanted:
            if endpoint is not None:
                sockets.append(_bound(where, endpoint))
    except CannotListen as exc:
        for sock in sockets:
            sock.close()
        log.error(kv("web_cannot_listen", error=str(exc)))
        raise
    return sockets


def _server(app: Any, endpoint: Endpoint) -> uvicorn.Server:
    config = uvicorn.Config(
        app,
        host=endpoint.host,
        port=endpoint.port,
        log_config=None,  # pbm's logging, not uvicorn's own set-up
        access_log=False,
        proxy_headers=True,  # the client address from a proxy on 127.0.0.1 (docs/web.md)
        lifespan="off",
        server_header=False,
    )
    return uvicorn.Server(config)


async def serve(
    config: Config,
    stop: asyncio.Event,
    *,
    wake: Callable[[], None] | None = None,
) -> None:
    """Serve the pages on `[web] listen` and the metrics on `metrics_listen` until
    `stop` is set; `wake` is called after a POST committed mail (the daemon's sender)."""
    sockets = _bound_all(config)
    clock = SystemClock()
    write_engine = make_engine(
        config.database_url, create=False, busy_timeout=config.busy_timeout_seconds
    )
    read_engine = make_read_engine(config.database_url, config.busy_timeout_seconds)
    reader = Reader(read_engine, config, clock)
    servers = []
    if config.web_listen is not None:
        app = make_app(config, reader, Writer(write_engine, config, clock, wake))
        servers.append(_server(app, config.web_listen))
    if config.metrics_listen is not None:
        servers.append(_server(metrics_app(reader), config.metrics_listen))
    tasks = [
        asyncio.create_task(s.serve(sockets=[sock]), name="web")
        for s, sock in zip(servers, sockets, strict=True)
    ]
    log.info(kv("web_started", listen=config.web_listen, metrics=config.metrics_listen))
    try:
        waiting = asyncio.create_task(stop.wait())
        await asyncio.wait([waiting, *tasks], return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
    finally:
        for server in servers:
            server.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 10)
        for sock in sockets:
            sock.close()
        read_engine.dispose()
        write_engine.dispose()
        log.info(kv("web_stopped"))


def run(
    config: Config, *, wake: Callable[[], None] | None = None, parent: int | None = None
) -> None:
    """Serve in this process until SIGTERM or SIGINT, its priority lowered by `[web]
    nice` first. `parent` is a pipe to the daemon that started it, readable only once
    the daemon's end closes: a daemon that died leaves no pages behind."""
    niceness = os.nice(config.web_nice)
    log.info(kv("web_priority", nice=niceness, pid=os.getpid()))

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        if parent is not None:

            def orphaned() -> None:
                loop.remove_reader(parent)
                log.warning(kv("web_daemon_gone"))
                stop.set()

            loop.add_reader(parent, orphaned)
        await serve(config, stop, wake=wake)

    asyncio.run(main())


__all__ = ["CannotListen", "run", "serve"]
