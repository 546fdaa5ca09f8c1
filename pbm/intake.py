"""Intake: store each raw message once (Message-ID unique) and process it in one
transaction. The daemon (IMAP, LMTP) stores first and processes each message after;
`process_message` (the pipe, the CLI) stores and processes in a single transaction, since
its sender keeps the message until that commits.

Two kinds of failure, kept apart:
- the store failed (locked, disk full, I/O, missing schema: pbm.store.failures.classify):
  nothing of the message's work is kept and the message waits. A stored message goes
  back to `new` with `attempts` counted and `next_attempt_at` pushed back (30 s doubling
  to an hour; after two days it is marked failed with the reason); the pipe raises
  StoreUnavailable, so its sender (the MTA) keeps the message and delivers it again.
  A conflict with another daemon's transaction (PostgreSQL: a deadlock, a unique key
  taken meanwhile) counts as one too, after a few tries again at once.
- the code raised anything else (a bug): the message's work is rolled back and it is
  marked failed with the traceback, for `pbm mail failed` and `pbm mail retry`.
"""

from __future__ import annotations

import hashlib
import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.parser import BytesHeaderParser
from email.policy import compat32

from sqlalchemy import bindparam
from sqlalchemy import select as sa_select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbm.clock import Clock
from pbm.commands.order import order_keys
from pbm.config import Config
from pbm.errors import StoreUnavailable
from pbm.logfmt import kv
from pbm.mail.identity import MailboxRules, operator_rules
from pbm.mail.inbound import parse_message
from pbm.pipeline import StoredMessage, handle_message
from pbm.services.accounts.passwords import PasswordCheckNeeded
from pbm.services.context import Context
from pbm.store import claims, queries
from pbm.store.engine import session_for
from pbm.store.failures import describe_failure, unavailable_on_failure
from pbm.store.models import InboundMessage, MessageStatus
from pbm.store.types import table_of
from pbm.work import run_work

log = logging.getLogger(__name__)

_INBOUND = table_of(InboundMessage)
# FOR UPDATE (PostgreSQL): a second daemon or pipe that took the same message waits for
# this transaction and then finds it processed, so a message never runs twice.
_LOAD = (
    sa_select(_INBOUND.c.id, _INBOUND.c.message_id, _INBOUND.c.raw, _INBOUND.c.status)
    .where(_INBOUND.c.id == bindparam("row_id"))
    .with_for_update()
)
_FINISH = (
    _INBOUND.update()
    .where(_INBOUND.c.id == bindparam("row_id"))
    .values(
        status=bindparam("new_status"),
        error=bindparam("reason"),
        processed_at=bindparam("at"),
        claimed_by=None,
        claimed_until=None,
    )
)


@dataclass(frozen=True)
class Backoff:
    """When a message whose processing met a store failure is tried again."""

    first_seconds: float = 30.0
    max_seconds: float = 3600.0
    give_up_after: timedelta = timedelta(days=2)

    def delay(self, attempts: int) -> timedelta:
        """The wait after the `attempts`-th failed try (1 = the first)."""
        exponent = min(max(attempts - 1, 0), 30)
        return timedelta(seconds=min(self.first_seconds * 2**exponent, self.max_seconds))

    def gives_up(self, attempts: int) -> bool:
        """Whether the waits after `attempts` failed tries add up to more than
        `give_up_after` (the message is then marked failed instead)."""
        waited = timedelta()
        for n in range(1, attempts + 1):
            waited += self.delay(n)
            if waited > self.give_up_after:
                return True
        return False


RETRY = Backoff()
# How many times a message whose transaction PostgreSQL aborted for a conflict with
# another daemon's (a deadlock) runs again at once before it waits like a store failure.
CONFLICT_RETRIES = 3


def message_id_of(raw: bytes) -> str:
    """The Message-ID header, or a stable id derived from the bytes when it is missing."""
    headers = BytesHeaderParser(policy=compat32).parsebytes(raw, headersonly=True)
    value = str(headers.get("Message-ID", "") or "").strip()
    if value:
        return value[:255]
    digest = hashlib.sha256(raw).hexdigest()[:32]
    return f"<missing.{digest}@pbm.invalid>"


@dataclass(frozen=True)
class Arrival:
    """A message as it is stored: its bytes, its Message-ID and its order keys, read
    from it before the store's transaction (`arrival`), so that the daemon's one write
    lock on SQLite is not held while a message is parsed."""

    raw: bytes
    message_id: str
    keys: tuple[str, ...]


def arrival(raw: bytes, rules: MailboxRules, message_id: str | None = None) -> Arrival:
    """`raw` read for storing: its Message-ID (`message_id_of`, unless given) and what
    it is about (its order keys, its sender keyed by the operator's `rules`)."""
    keys = tuple(order_keys(parse_message(raw), rules))
    return Arrival(raw, message_id or message_id_of(raw), keys)


def store_inbound(
    session: Session, message: Arrival, *, via: str, now: datetime
) -> tuple[int, bool]:
    """Add the message unless its Message-ID is known; returns (id, created). The
    caller commits."""
    values = {
        "message_id": message.message_id,
        "received_at": now,
        "via": via,
        "raw": message.raw,
        "status": "new",
    }
    inbound_id, created = queries.add_inbound(session, values)
    if created:
        queries.add_inbound_keys(session, inbound_id, message.keys)
    return inbound_id, created


def process_inbound(
    engine: Engine,
    inbound_id: int,
    *,
    clock: Clock,
    config: Config,
    retry: Backoff = RETRY,
    password_checks_outside: bool = False,
) -> str:
    """Process one stored message in its own transaction; returns its final status, or
    "deferred" when a store failure sent it back to wait (status `new`, `attempts` and
    `next_attempt_at` updated; "failed" once `retry` gives up). A transaction PostgreSQL
    aborted for a conflict with another daemon's (a deadlock, a unique key taken
    meanwhile) runs again at once, up to CONFLICT_RETRIES times, then waits like a store
    failure: a race is never marked failed. Raises StoreUnavailable when even that could
    not be written: the message then stays as it was, due. With
    `password_checks_outside`, a password check no cache keeps rolls the message back
    and comes out as PasswordCheckNeeded, for the caller to run it and call again."""

    def begin(session: Session) -> StoredMessage | str:
        return _stored_or_status(session, inbound_id)

    attempt = 0
    while True:
        try:
            return _process(
                engine,
                begin,
                via="",
                clock=clock,
                config=config,
                password_checks_outside=password_checks_outside,
            )
        except StoreUnavailable as exc:
            # Two daemons locking one message's boards in opposite orders, or inserting
            # one unique key: PostgreSQL aborts one whole transaction, which runs again
            # at once (not after the backoff of a store failure); the other goes on.
            if claims.conflict(exc) and attempt < CONFLICT_RETRIES:
                attempt += 1
                log.info(kv("process_conflict", id=inbound_id, attempt=attempt, error=exc))
                continue
            return _defer(engine, inbound_id, exc, clock.now(), retry)


def _stored_or_status(
    session: Session, inbound_id: int, todo: tuple[str, ...] = ("new", "failed")
) -> StoredMessage | str:
    """The stored message to process when its status is one of `todo`, else its status."""
    found = session.connection().execute(_LOAD, {"row_id": inbound_id}).first()
    if found is None:
        raise KeyError(f"no inbound message {inbound_id}")
    if found.status not in todo:
        return str(found.status)
    return StoredMessage(found.id, found.message_id, found.raw)


def _process(
    engine: Engine,
    begin: Callable[[Session], StoredMessage | str],
    *,
    via: str,
    clock: Clock,
    config: Config,
    password_checks_outside: bool = False,
) -> str:
    """In one unit of work (pbm.work): `begin` (which finds or stores the message), its
    commands, its replies and its status; returns the status. A bug rolls all of it
    back and stores the message as failed, with the traceback. A store failure rolls all
    of it back and raises StoreUnavailable, a password check asked for outside
    (`password_checks_outside`) PasswordCheckNeeded."""
    found: list[StoredMessage] = []

    def work(ctx: Context) -> str:
        stored = begin(ctx.session)
        if isinstance(stored, str):
            return stored
        found.append(stored)
        ctx.password_checks_outside = password_checks_outside
        status, reason = handle_message(ctx, stored)
        ctx.session.flush()
        params = {"row_id": stored.id, "new_status": status, "reason": reason, "at": clock.now()}
        ctx.session.connection().execute(_FINISH, params)
        return status

    try:
        return run_work(engine, work, clock=clock, config=config)
    except (StoreUnavailable, PasswordCheckNeeded):
        raise
    except Exception as exc:
        if claims.conflict(exc):  # a unique key another daemon took meanwhile
            raise StoreUnavailable(describe_failure(exc), "busy") from exc
        if not found:
            raise  # finding the message failed: there is nothing to keep
        stored = found[0]
        log.exception("message %s failed", stored.message_id)
        # The first line says what happened (`pbm mail failed` shows it).
        trace = f"{type(exc).__name__}: {exc}".splitlines()[0]
        trace += "\n" + traceback.format_exc()
    _mark_failed(engine, stored, via, trace, clock.now(), operator_rules(config))
    return "failed"


def _mark_failed(
    engine: Engine,
    stored: StoredMessage,
    via: str,
    trace: str,
    now: datetime,
    rules: MailboxRules,
) -> None:
    """Keep a failed message with its traceback (storing it again if the failure rolled
    its storing back). Raises StoreUnavailable when the store fails meanwhile."""
    with unavailable_on_failure(), session_for(engine) as session:
        message = arrival(stored.raw, rules, stored.message_id)
        inbound_id, _ = store_inbound(session, message, via=via, now=now)
        row = session.get(InboundMessage, inbound_id)
        assert row is not None
        row.status = MessageStatus.FAILED
        row.error = trace
        row.processed_at = now
        session.add(row)
        session.commit()


def _defer(
    engine: Engine, inbound_id: int, reason: StoreUnavailable, now: datetime, retry: Backoff
) -> str:
    """Send a stored message back to wait after a store failure; "deferred", or "failed"
    when `retry` gives up. Raises StoreUnavailable when that cannot be written either."""
    with unavailable_on_failure(), session_for(engine) as session:
        row = session.get(InboundMessage, inbound_id)
        if row is None:
            raise KeyError(f"no inbound message {inbound_id}")
        if row.status not in (MessageStatus.NEW, MessageStatus.FAILED):
            return row.status  # processed meanwhile, by another process
        row.attempts += 1
        if retry.gives_up(row.attempts):
            row.status = MessageStatus.FAILED
            row.error = (
                f"gave up after {row.attempts} attempts over "
                f"{retry.give_up_after.total_seconds() / 3600:.0f} h: "
                f"the store failed ({reason.kind}): {reason}"
            )
            row.processed_at = now
            status = "failed"
        else:
            delay = retry.delay(row.attempts)
            row.status = MessageStatus.NEW
            row.next_attempt_at = now + delay
            row.claimed_by = row.claimed_until = None  # the retry is any daemon's
            row.error = f"attempt {row.attempts}: the store failed ({reason.kind}): {reason}"
            status = "deferred"
        session.add(row)
        session.commit()
        fields = {"id": inbound_id, "message_id": row.message_id, "attempts": row.attempts}
    if status == "failed":
        log.error(kv("process_gave_up", **fields, error=str(reason)))
    else:
        log.warning(kv("process_deferred", **fields, retry_in=delay, error=str(reason)))
    return status


def retry_failed(
    engine: Engine, *, clock: Clock, config: Config, ids: list[int] | None = None
) -> dict[int, str]:
    """Process failed messages again (after a fix), their retry count reset; returns
    id -> new status."""
    with session_for(engine) as session:
        query = select(InboundMessage).where(InboundMessage.status == MessageStatus.FAILED)
        if ids:
            query = query.where(col(InboundMessage.id).in_(ids))
        rows = list(session.exec(query.order_by(col(InboundMessage.id))))
        for row in rows:
            row.status = MessageStatus.NEW
            row.attempts = 0
            row.next_attempt_at = None
            session.add(row)
        session.commit()
        todo = [r.saved_id for r in rows]
    return {i: process_inbound(engine, i, clock=clock, config=config) for i in todo}


def failed_messages(session: Session) -> list[InboundMessage]:
    """Messages whose processing raised a bug (or whose retries gave up), oldest first."""
    query = select(InboundMessage).where(InboundMessage.status == MessageStatus.FAILED)
    return list(session.exec(query.order_by(col(InboundMessage.id))))


def process_message(engine: Engine, raw: bytes, *, via: str, clock: Clock, config: Config) -> str:
    """Store and process in one transaction: what `pbm mail process` and the tests use.

    Nothing is acknowledged before the commit (the pipe's exit status), so a crash before
    it leaves the message with its sender to deliver again. A message that fails is
    stored as failed, with its traceback, for `pbm mail retry`. A message already stored
    keeps its status (it runs once); one stored but not yet processed is processed here.
    A store failure raises StoreUnavailable with nothing kept: the sender delivers the
    message again later (the pipe exits 75).
    """
    message = arrival(raw, operator_rules(config))

    def begin(session: Session) -> StoredMessage | str:
        inbound_id, created = store_inbound(session, message, via=via, now=clock.now())
        if created:
            return StoredMessage(inbound_id, message.message_id, raw)
        # A copy that failed stays failed until `pbm mail retry`.
        return _stored_or_status(session, inbound_id, todo=("new",))

    return _process(engine, begin, via=via, clock=clock, config=config)
