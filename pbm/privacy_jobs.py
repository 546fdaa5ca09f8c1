"""The periodic job of a player's own data (docs/privacy.md): carry out the erasures
whose delay ran out, forget erasure tokens never sent back, and mail the due parts of
large exports. Each erasure and each part is its own transaction (pbm.jobs'), and a
request or part is deleted in the transaction that acts on it, so nothing is done twice.
Beside it, hourly, the text of mail handled longer ago than `[privacy] mail_text_days`
is forgotten (pbm.services.mailing.retention), a batch per transaction.
"""

from __future__ import annotations

from functools import partial

from sqlalchemy.engine import Engine

from pbm.clock import Clock
from pbm.config import Config
from pbm.services.accounts import erasure_requests, export_parts
from pbm.services.context import Context
from pbm.services.mailing import retention
from pbm.store.engine import session_for
from pbm.work import run_work

MAIL_TEXT_SECONDS = 3600.0
# Batches of forgotten mail per run: a database that kept years of mail before it got
# this job catches up over a few runs, none of them long.
MAIL_TEXT_BATCHES = 40


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


def run_mail_text(engine: Engine, clock: Clock, config: Config) -> dict[str, int]:
    """Forget the text of mail handled before `[privacy] mail_text_days`, a batch per
    transaction, until none is left or MAIL_TEXT_BATCHES were done."""
    forgotten = 0
    for _ in range(MAIL_TEXT_BATCHES):
        batch = run_work(engine, retention.forget_old_text, clock=clock, config=config)
        forgotten += batch
        if batch < retention.BATCH:
            break
    return {"mail_texts_forgotten": forgotten}
