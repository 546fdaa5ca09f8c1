"""Work claimed in the database, so that several daemons can share one PostgreSQL.

A daemon claims the stored messages it will process and the mails it will send:
`FOR UPDATE SKIP LOCKED` picks rows no other daemon is claiming at that moment, and
`claimed_by`/`claimed_until` keep them its own after the commit. Its heartbeat (the
`daemons` row) renews its claims; a daemon silent past the lease loses them, and the
next claim by any daemon takes them over. A claim decides who works on a row, never
whether the work happens twice: the processing transaction locks the message row and
checks its status (pbm.intake), and a mail marked sent is not due again.

A dead daemon's claims do not wait for the lease: on PostgreSQL each daemon holds a
liveness lock on a connection of its own, which the server drops the moment the process
dies, and the next heartbeat of any daemon (or the restarted daemon's start) frees the
claims of daemons without one; on SQLite a starting daemon is the only one on its file
and frees every claim. Messages are claimed in the order they were accepted, and one
that shares its sender or a board with an earlier unprocessed message waits for it.

Cluster-wide periodic jobs run under a transaction-scoped advisory lock, and a JobMark
per job records the due time last run, so that each due time runs once for the cluster.

On SQLite (one daemon per file) `FOR UPDATE` and advisory locks do not exist; the same
statements run there without them (SQLAlchemy leaves `FOR UPDATE` out), and the single
writer lock serialises everything anyway.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, func, or_, text
from sqlalchemy import select as sa_select
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbm.store.models import InboundKey, InboundMessage, OutboxMail
from pbm.store.models_cluster import DaemonBeat
from pbm.store.models_correspondence import JobMark
from pbm.store.types import table_of

# How long a claim (and a heartbeat) holds without being renewed: a daemon renews its
# own every few seconds, so only one that stopped beating loses its work.
LEASE = timedelta(seconds=30)
# Rows of daemons silent this long are dropped from the table (and from status).
FORGET_AFTER = timedelta(days=7)
# The first key of a daemon's liveness lock (the second is its id): "pbm" in ASCII.
LIVENESS_SPACE = 0x70626D
# The NOTIFY channel that wakes idle daemons; the payload says which queue has work.
CHANNEL = "pbm_work"

_IN = table_of(InboundMessage)
_KEYS = table_of(InboundKey)
_OUT = table_of(OutboxMail)
_BEAT = table_of(DaemonBeat)


def is_postgres(where: Session | Engine) -> bool:
    """Whether `where` works on PostgreSQL (where several daemons may share it)."""
    bind = where.get_bind() if isinstance(where, Session) else where
    return bind.dialect.name == "postgresql"


# SQLSTATE 23505: two transactions of several daemons inserted the same unique key at
# once (SQLite, with one writer, never races: there it is a bug).
UNIQUE_VIOLATION = "23505"


def conflict(exc: BaseException) -> bool:
    """Whether `exc` (or what it was raised from) is PostgreSQL aborting a transaction
    for a conflict with another one (SQLSTATE class 40: a deadlock, a serialization
    failure; or a unique key another transaction took meanwhile): nothing of it was
    kept, and running it again at once is right."""
    current: BaseException | None = exc
    for _ in range(5):
        if current is None:
            return False
        state = getattr(getattr(current, "orig", None), "sqlstate", None)
        if isinstance(state, str) and (state.startswith("40") or state == UNIQUE_VIOLATION):
            return True
        current = current.__cause__
    return False


def serialise(session: Session, name: str) -> None:
    """Wait for, then hold until the transaction ends, the cluster-wide lock `name`, so
    that transactions allocating from one series (the next board number of a game) take
    turns: the next reads what the previous committed. On SQLite the one writer lock,
    taken at BEGIN, does this already."""
    if is_postgres(session):
        session.connection().execute(
            text("SELECT pg_advisory_xact_lock(:key)"), {"key": lock_key(name)}
        )


def _free(table: Any) -> Any:
    """Rows nobody holds, whose claim ran out by `:now`, or that `:owner` holds already
    (its own worker asking again, after a shutdown or a store failure cut a run short)."""
    return or_(
        table.c.claimed_until.is_(None),
        table.c.claimed_until <= bindparam("now"),
        table.c.claimed_by == bindparam("owner"),
    )


def _hold(table: Any) -> Any:
    """Rows `:ids` claimed by `:owner` until `:until`."""
    return (
        table.update()
        .where(table.c.id.in_(bindparam("ids", expanding=True)))
        .values(claimed_by=bindparam("owner"), claimed_until=bindparam("until"))
    )


# --- inbound messages -------------------------------------------------------------------


def _waits_for_earlier() -> Any:
    """A message that shares a key (its sender, a board: pbm.commands.order) with an
    earlier accepted one still unprocessed, which must run first. Ids follow acceptance:
    a message sent after another's acceptance was stored after it committed."""
    mine, earlier, message = _KEYS.alias("mine"), _KEYS.alias("earlier"), _IN.alias("before")
    return (
        sa_select(mine.c.id)
        .join(earlier, earlier.c.key == mine.c.key)
        .join(message, message.c.id == earlier.c.inbound_id)
        .where(
            mine.c.inbound_id == _IN.c.id,
            earlier.c.inbound_id < _IN.c.id,
            message.c.status == "new",
        )
        .exists()
    )


# Built once: the daemon claims before every message it processes, and building the
# statement cost more than running it.
_CLAIM_IN = (
    sa_select(_IN.c.id)
    .where(
        _IN.c.status == "new",
        or_(_IN.c.next_attempt_at.is_(None), _IN.c.next_attempt_at <= bindparam("now")),
        or_(
            _IN.c.via.in_(bindparam("own_vias", expanding=True)),
            _IN.c.received_at <= bindparam("foreign_before"),
        ),
        _free(_IN),
        ~_waits_for_earlier(),
    )
    .order_by(_IN.c.id)
    .limit(bindparam("limit"))
    .with_for_update(of=_IN, skip_locked=True)
)
_HOLD_IN = _hold(_IN)


def claim_inbound(
    session: Session,
    *,
    owner: int,
    now: datetime,
    limit: int,
    own_vias: Sequence[str],
    foreign_before: datetime,
) -> list[int]:
    """Claim up to `limit` stored messages due for processing (status new, no retry
    waiting, unclaimed or their claim run out, no earlier message of the same sender or
    board unprocessed) for daemon `owner`, oldest first; the caller commits. Messages
    stored by other processes (via not in `own_vias`: a pipe that processes its own)
    are taken only once received before `foreign_before`."""
    conn = session.connection()
    found = conn.execute(
        _CLAIM_IN,
        {
            "now": now,
            "own_vias": list(own_vias),
            "foreign_before": foreign_before,
            "owner": owner,
            "limit": limit,
        },
    )
    ids = [int(i) for i in found.scalars()]
    if ids:
        conn.execute(_HOLD_IN, {"ids": ids, "owner": owner, "until": now + LEASE})
    return ids


# --- outbox mails -----------------------------------------------------------------------


_CLAIM_OUT = (
    sa_select(_OUT.c.id)
    .where(
        _OUT.c.status == "queued",
        _OUT.c.next_attempt_at <= bindparam("now"),
        _free(_OUT),
        _OUT.c.id.not_in(bindparam("held", expanding=True)),
    )
    .order_by(_OUT.c.next_attempt_at, _OUT.c.id)
    .limit(bindparam("limit"))
    .with_for_update(skip_locked=True)
)
_HOLD_OUT = _hold(_OUT)


def claim_outbox(
    session: Session,
    *,
    owner: int,
    now: datetime,
    limit: int,
    held: Collection[int] = (),
) -> list[OutboxMail]:
    """Claim up to `limit` queued mails whose next attempt is due and that no live
    daemon holds, for daemon `owner`, oldest due first; the caller commits. `held` are
    the owner's mails in hand (claimed, outcome not recorded yet): never claimed again."""
    conn = session.connection()
    found = conn.execute(
        _CLAIM_OUT, {"now": now, "owner": owner, "limit": limit, "held": list(held)}
    )
    ids = [int(i) for i in found.scalars()]
    if not ids:
        return []
    conn.execute(_HOLD_OUT, {"ids": ids, "owner": owner, "until": now + LEASE})
    rows = session.exec(
        select(OutboxMail)
        .where(col(OutboxMail.id).in_(ids))
        .order_by(col(OutboxMail.next_attempt_at), col(OutboxMail.id))
    )
    return list(rows)


_RELEASE_OUT = (
    _OUT.update()
    .where(_OUT.c.id == bindparam("mail_id"))
    .values(claimed_by=None, claimed_until=None)
)


def release_outbox(session: Session, mail_ids: Sequence[int]) -> None:
    """Give up the claims on mails whose outcome was recorded (sent, failed, or due
    again later): a retry is then anyone's."""
    if mail_ids:
        session.flush()
        session.connection().execute(_RELEASE_OUT, [{"mail_id": i} for i in mail_ids])


# --- heartbeats -------------------------------------------------------------------------


def register_daemon(session: Session, *, host: str, pid: int, now: datetime, listen: str) -> int:
    """A row for a starting daemon; returns its id (the owner of its claims)."""
    row = DaemonBeat(host=host[:255], pid=pid, started_at=now, last_seen=now, listen=listen[:255])
    session.add(row)
    session.flush()
    return row.saved_id


def beat(session: Session, daemon_id: int, now: datetime, counters: dict[str, int]) -> None:
    """The heartbeat: the daemon is alive at `now`, its claims run until `now + LEASE`,
    and the claims of daemons known dead (release_dead) or silent past their lease are
    released."""
    until = now + LEASE
    release_dead(session, daemon_id)
    conn = session.connection()
    conn.execute(
        _BEAT.update()
        .where(_BEAT.c.id == daemon_id)
        .values(last_seen=now, stopped_at=None, counters=json.dumps(counters, sort_keys=True))
    )
    for table, waiting in ((_IN, "new"), (_OUT, "queued")):
        conn.execute(
            table.update()
            .where(table.c.status == waiting, table.c.claimed_by == daemon_id)
            .values(claimed_until=until)
        )
        conn.execute(
            table.update()
            .where(
                table.c.status == waiting,
                table.c.claimed_by.is_not(None),
                table.c.claimed_until <= now,
            )
            .values(claimed_by=None, claimed_until=None)
        )
    conn.execute(_BEAT.delete().where(_BEAT.c.last_seen < now - FORGET_AFTER))


# The ids of the daemons whose liveness lock is held (in this database), :space bound.
_LIVE_DAEMONS = (
    "SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND classid = :space AND objsubid = 2 "
    "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
)


def release_dead(session: Session, owner: int) -> None:
    """Free at once the claims of daemons known dead, so their work waits for no lease.
    On SQLite a daemon is the only one on its file (the serve lock), so every claim not
    `owner`'s is a dead predecessor's. On PostgreSQL a daemon lives while its liveness
    lock (Liveness) is held: the server drops it when the daemon's connection closes,
    at once when the process dies, even by SIGKILL."""
    conn = session.connection()
    for table, waiting in ((_IN, "new"), (_OUT, "queued")):
        if not is_postgres(session):
            conn.execute(
                table.update()
                .where(table.c.claimed_by.is_not(None), table.c.claimed_by != owner)
                .values(claimed_by=None, claimed_until=None)
            )
            continue
        conn.execute(
            text(
                f"UPDATE {table.name} SET claimed_by = NULL, claimed_until = NULL "
                "WHERE status = :waiting AND claimed_by IS NOT NULL AND claimed_by <> :owner "
                f"AND claimed_by NOT IN ({_LIVE_DAEMONS})"
            ),
            {"waiting": waiting, "owner": owner, "space": LIVENESS_SPACE},
        )


class Liveness:
    """A daemon's sign of life on PostgreSQL: a session-level advisory lock (keys
    LIVENESS_SPACE and the daemon's id) held on a connection of its own for as long as
    the daemon runs. PostgreSQL drops it when that connection closes, which the kernel
    does the moment the process dies, so the others know a dead daemon at once
    (release_dead) instead of after its lease. A lost connection is opened again at the
    next `renew`; meanwhile the daemon may lose claims, which costs at most work done
    twice in vain, never a message processed twice (see the module docstring)."""

    def __init__(self, engine: Engine, daemon_id: int) -> None:
        self.engine = engine
        self.daemon_id = daemon_id
        self._raw: Any = None

    def renew(self) -> None:
        """Hold the lock (again, after a lost connection); StoreUnavailable-free: a
        failure here is retried at the next heartbeat."""
        if self._raw is not None:
            try:
                self._raw.driver_connection.execute("SELECT 1")
                return
            except Exception:
                self.close()
        raw = self.engine.raw_connection()
        try:
            driver: Any = raw.driver_connection
            driver.set_autocommit(True)
            driver.execute("SELECT pg_advisory_lock(%s, %s)", (LIVENESS_SPACE, self.daemon_id))
        except Exception:
            with contextlib.suppress(Exception):
                raw.invalidate()
            raise
        self._raw = raw

    def close(self) -> None:
        raw, self._raw = self._raw, None
        if raw is not None:
            with contextlib.suppress(Exception):
                raw.invalidate()  # never back to the pool: it holds the lock


def stop_daemon(session: Session, daemon_id: int, now: datetime) -> None:
    """A clean stop: the daemon's row says so and its claims are free at once."""
    conn = session.connection()
    conn.execute(_BEAT.update().where(_BEAT.c.id == daemon_id).values(stopped_at=now))
    for table in (_IN, _OUT):
        conn.execute(
            table.update()
            .where(table.c.claimed_by == daemon_id)
            .values(claimed_by=None, claimed_until=None)
        )


@dataclass(frozen=True)
class DaemonInfo:
    """A daemon as `pbm mail status` shows it: its row, whether it is alive (heard of
    within the lease and not stopped) and the work it holds."""

    id: int
    host: str
    pid: int
    started_at: datetime
    last_seen: datetime
    stopped_at: datetime | None
    listen: str
    counters: dict[str, int]
    alive: bool
    messages: int
    mails: int

    @property
    def state(self) -> str:
        if self.alive:
            return "running"
        return "stopped" if self.stopped_at is not None else "gone"


def daemons(session: Session, now: datetime) -> list[DaemonInfo]:
    """Every daemon known, oldest first, with the messages and mails it holds (a live
    claim: one that has not run out). On PostgreSQL a daemon without its liveness lock
    is gone at once, whatever its last heartbeat."""
    held: dict[tuple[str, int], int] = {}
    live: set[int] | None = None
    if is_postgres(session):
        found_live = session.connection().execute(text(_LIVE_DAEMONS), {"space": LIVENESS_SPACE})
        live = {int(i) for i in found_live.scalars()}
    for name, table, waiting in (("in", _IN, "new"), ("out", _OUT, "queued")):
        query = (
            sa_select(table.c.claimed_by, func.count())
            .where(
                table.c.status == waiting,
                table.c.claimed_by.is_not(None),
                table.c.claimed_until > now,
            )
            .group_by(table.c.claimed_by)
        )
        for owner, n in session.connection().execute(query):
            held[(name, int(owner))] = int(n)
    found = []
    for row in session.exec(select(DaemonBeat).order_by(col(DaemonBeat.id))):
        alive = row.stopped_at is None and row.last_seen + LEASE > now
        alive = alive and (live is None or row.saved_id in live)
        found.append(
            DaemonInfo(
                id=row.saved_id,
                host=row.host,
                pid=row.pid,
                started_at=row.started_at,
                last_seen=row.last_seen,
                stopped_at=row.stopped_at,
                listen=row.listen,
                counters=json.loads(row.counters or "{}"),
                alive=alive,
                messages=held.get(("in", row.saved_id), 0),
                mails=held.get(("out", row.saved_id), 0),
            )
        )
    return found


# --- periodic jobs, once per due time for the cluster -----------------------------------


def lock_key(name: str) -> int:
    """A stable 63-bit advisory lock key for the lock `name`."""
    return int.from_bytes(hashlib.sha256(f"pbm.{name}".encode()).digest()[:8], "big") >> 1


def try_job_lock(session: Session, name: str) -> bool:
    """Take the cluster-wide lock of job `name` until the session's transaction ends;
    False when another daemon holds it. Always True on SQLite (one daemon per file)."""
    if not is_postgres(session):
        return True
    found = session.connection().execute(
        text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": lock_key(f"job.{name}")}
    )
    return bool(found.scalar())


_JOB_KIND = "periodic"


def job_due(session: Session, name: str, due_at: datetime) -> bool:
    """Whether job `name` has not yet run for the due time `due_at`."""
    mark = session.exec(
        select(JobMark).where(JobMark.kind == _JOB_KIND, JobMark.key == name)
    ).first()
    return mark is None or mark.at < due_at


def mark_job(session: Session, name: str, due_at: datetime) -> None:
    """Record that job `name` ran for `due_at` (under its lock; the caller commits)."""
    mark = session.exec(
        select(JobMark).where(JobMark.kind == _JOB_KIND, JobMark.key == name)
    ).first()
    if mark is None:
        mark = JobMark(kind=_JOB_KIND, key=name, at=due_at)
    mark.at = due_at
    session.add(mark)


# --- waking idle daemons ----------------------------------------------------------------


def notify(session: Session, queue: str) -> None:
    """Wake the daemons listening (PostgreSQL: delivered at commit, once per distinct
    payload in a transaction); nothing on SQLite, where one daemon does all."""
    if is_postgres(session):
        session.connection().execute(
            text("SELECT pg_notify(:channel, :queue)"), {"channel": CHANNEL, "queue": queue}
        )


def listen(
    engine: Engine, on_notify: Callable[[str], None], stop: threading.Event, tick: float = 1.0
) -> None:
    """Call `on_notify(queue)` for every notification on CHANNEL until `stop` is set
    (PostgreSQL; returns at once elsewhere). Runs in a thread of its own on a connection
    of its own; a lost connection is opened again after `tick`, and `on_notify("")`
    then says that notifications may have been missed."""
    if engine.dialect.name != "postgresql":
        return
    while not stop.is_set():
        try:
            raw = engine.raw_connection()
        except Exception:
            stop.wait(tick)
            continue
        try:
            driver: Any = raw.driver_connection
            driver.set_autocommit(True)
            driver.execute(f"LISTEN {CHANNEL}")
            on_notify("")
            while not stop.is_set():
                for note in driver.notifies(timeout=tick):
                    on_notify(str(note.payload))
        except Exception:
            stop.wait(tick)
        finally:
            with contextlib.suppress(Exception):
                raw.invalidate()  # never back to the pool: it is LISTENing
