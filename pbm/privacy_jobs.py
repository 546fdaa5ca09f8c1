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
from pbm.jobs import _in_transaction
from pbm.services import erasure_requests, export_parts
from pbm.services.context import Context
from pbm.store.engine import session_for
from pbm.texts import use_templates


def _due(ctx: Context) -> tuple[list[int], list[int]]:
    return erasure_requests.due_requests(ctx), export_parts.due_parts(ctx)


def run_privacy(engine: Engine, clock: Clock, config: Config) -> dict[str, int]:
    """Everything due at `clock.now()`; returns how many of each thing were done."""
    use_templates(config.templates_dir)
    with session_for(engine) as session:
        erasures, parts = _due(Context(session=session, clock=clock, config=config, sender=""))
    done = {"erasures": 0, "export_parts": 0}
    for request_id in erasures:
        done["erasures"] += _in_transaction(
            engine, clock, config, partial(erasure_requests.perform, request_id=request_id)
        )
    for part_id in parts:
        done["export_parts"] += _in_transaction(
            engine, clock, config, partial(export_parts.send_due, part_id=part_id)
        )
    done["erasure_asks_dropped"] = _in_transaction(
        engine, clock, config, erasure_requests.drop_unconfirmed
    )
    return done
