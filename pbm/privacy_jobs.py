"""The periodic job of a player's own data (docs/privacy.md): carry out the erasures
whose delay ran out, forget erasure tokens never sent back, and mail the due parts of
large exports. Each erasure and each part is its own transaction (pbm.jobs'), and a
request or part is deleted in the transaction that acts on it, so nothing is done twice.
"""

from __future__ import annotations

from functools import partial

from sqlalchemy.engine import Engine

from pbm.clock import Clock
from pbm.config import Config
from pbm.services.accounts import erasure_requests, export_parts
from pbm.services.context import Context
from pbm.store.engine import session_for
from pbm.work import run_work


def _due(ctx: Context) -> tuple[list[int], list[int]]:
    return erasure_requests.due_requests(ctx), export_parts.due_parts(ctx)


def run_privacy(engine: Engine, clock: Clock, config: Config) -> dict[str, int]:
    """Everything due at `clock.now()`; returns how many of each thing were done."""
    with session_for(engine) as session:
        erasures, parts = _due(Context(session=session, clock=clock, config=config, sender=""))
    done = {"erasures": 0, "export_parts": 0}
    for request_id in erasures:
        done["erasures"] += run_work(
            engine,
            partial(erasure_requests.perform, request_id=request_id),
            clock=clock,
            config=config,
        )
    for part_id in parts:
        done["export_parts"] += run_work(
            engine, partial(export_parts.send_due, part_id=part_id), clock=clock, config=config
        )
    done["erasure_asks_dropped"] = run_work(
        engine, erasure_requests.drop_unconfirmed, clock=clock, config=config
    )
    return done
