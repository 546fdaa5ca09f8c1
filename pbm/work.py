"""One unit of work, the one way pbm runs anything that changes the store: a stored
message (pbm.intake), a command run as if mailed (`pbm run`), an operator's command
(pbm.cli.common), a due job and a bot's move (pbm.jobs).

`unit_of_work` (or `run_work`, for a function) opens the transaction, hands the work a
Context, bounds its replies when they answer someone who wrote (pbm.output_limits),
queues them (pbm.outgoing), commits once and wakes the sender. Failures come out in two
kinds, told apart by pbm.store.failures.classify: the store's (temporary: raised as
StoreUnavailable, nothing kept, try again later) and anything else (a bug: raised as it
is, with its traceback, and nothing kept).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from sqlalchemy.engine import Engine

from pbm.clock import Clock
from pbm.config import Config
from pbm.outgoing import queue_replies
from pbm.output_limits import bounded
from pbm.services.context import Context, Reply, in_order
from pbm.store import claims
from pbm.store.engine import session_for
from pbm.store.failures import unavailable_on_failure

T = TypeVar("T")


@dataclass
class Unit:
    """One transaction's work: the Context it runs in and, once it ended, the mails it
    queued (or would have queued, when it was not kept)."""

    ctx: Context
    replies: list[Reply] = field(default_factory=list)


@contextmanager
def unit_of_work(
    engine: Engine, *, clock: Clock, config: Config, sender: str = "", keep: bool = True
) -> Iterator[Unit]:
    """The transaction a piece of work runs in: what the block leaves in `unit.ctx`
    is bounded, queued and committed at its end; `keep=False` rolls it all back (a dry
    run) after the replies were bounded. A store failure comes out as StoreUnavailable;
    anything else the block raises passes unchanged, all of it rolled back."""
    with unavailable_on_failure(), session_for(engine) as session:
        unit = Unit(Context(session=session, clock=clock, config=config, sender=sender))
        yield unit
        ctx = unit.ctx
        answering = ctx.answering
        # Whoever can make pbm write is held to one answer and a reply budget; what the
        # server or its operator starts is not.
        replies = in_order(ctx.replies)
        unit.replies = bounded(ctx, replies) if answering.bounded else replies
        if not keep:
            session.rollback()
            return
        if unit.replies:
            queue_replies(ctx, answering.mail, unit.replies, inbound_id=answering.inbound_id)
            claims.notify(session, "outbox")  # wake a daemon to send them
        session.commit()


def run_work(engine: Engine, work: Callable[[Context], T], *, clock: Clock, config: Config) -> T:
    """Run `work` as one unit of work (`unit_of_work`); returns what it returned."""
    with unit_of_work(engine, clock=clock, config=config) as unit:
        value = work(unit.ctx)
    return value
