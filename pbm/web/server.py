"""pbm on the web (docs/web.md): the pages, feeds and one-click links, and the
operator's /metrics and /healthz, served by uvicorn on the daemon's asyncio loop.

`serve(config, ...)` is the one entry point: `pbm serve` starts it beside its other
runners when `[web] listen` is set, `pbm web` runs it alone."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import uvicorn
from sqlalchemy.engine import Engine

from pbm.clock import Clock, SystemClock
from pbm.config import Config, Endpoint
from pbm.logfmt import kv
from pbm.store.engine import make_engine
from pbm.store.readonly import make_read_engine
from pbm.web.app import Reader, Writer, make_app
from pbm.web.metrics import metrics_app

log = logging.getLogger("pbm.web")


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
    engine: Engine | None = None,
    clock: Clock | None = None,
    lock: AbstractContextManager[Any] | None = None,
    wake: Callable[[], None] | None = None,
) -> None:
    """Serve the pages on `[web] listen` and the metrics on `metrics_listen` until
    `stop` is set. `engine`, `lock` and `wake` are the daemon's (its writes go through
    its write lock and wake its sender); alone, `pbm web` makes its own engine."""
    clock = clock or SystemClock()
    own = engine is None
    write_engine = engine or make_engine(
        config.database_url, create=False, busy_timeout=config.busy_timeout_seconds
    )
    read_engine = make_read_engine(config.database_url, config.busy_timeout_seconds)
    reader = Reader(read_engine, config, clock)
    servers = []
    if config.web_listen is not None:
        app = make_app(config, reader, Writer(write_engine, config, clock, lock, wake))
        servers.append(_server(app, config.web_listen))
    if config.metrics_listen is not None:
        servers.append(_server(metrics_app(reader), config.metrics_listen))
    tasks = [asyncio.create_task(s.serve(), name="web") for s in servers]
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
        read_engine.dispose()
        if own:
            write_engine.dispose()
        log.info(kv("web_stopped"))


__all__ = ["serve"]
