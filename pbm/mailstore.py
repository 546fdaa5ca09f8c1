"""The mail transport's two doors into the store, run in threads so the event loop stays free.

`DbInbox` stores raw messages (one commit each; Message-ID unique, so a second copy is a
no-op) and processes stored ones one by one. `DbOutbox` hands due outbox rows to the
sender and records what became of them.

On SQLite every transaction in one process goes through one lock: SQLite allows one
writer (and pbm's engine begins every transaction IMMEDIATE, reads too), and queueing on
a Python lock is prompt where SQLite's busy handler sleeps and retries. The busy timeout
still covers other processes (`pbm mail process` from a pipe, the CLI). On PostgreSQL
there is no such lock (the daemon passes a null one): the work is claimed in the
database (pbm.store.claims), so several threads and several daemons share it.

A store failure (pbm.store.failures.classify) leaves here as StoreUnavailable, so the
listeners answer 451 and the IMAP intake leaves the message in the folder.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import select

from pbm.clock import Clock
from pbm.config import Config
from pbm.errors import StoreUnavailable
from pbm.html_parts import HtmlParts, InProcess, Unfinished
from pbm.intake import arrival, process_inbound, store_inbound
from pbm.mail.bounces import verp_address
from pbm.mail.identity import operator_rules
from pbm.mail.smtp_out import OutgoingMail, SendOutcome
from pbm.services.accounts.passwords import PasswordCheckNeeded
from pbm.services.mailing.outbox import (
    mark_failed,
    mark_retry,
    mark_sent,
    outbox_depth,
    recipients_of,
)
from pbm.store import claims
from pbm.store.database_file import DatabaseFile
from pbm.store.engine import session_for
from pbm.store.failures import unavailable_on_failure
from pbm.store.models import InboundMessage, OutboxMail

# How the daemon's own intake stores messages; see DbInbox.pending_ids.
OWN_VIAS = ("imap", "lmtp", "smtp")
FOREIGN_GRACE = timedelta(seconds=60)
# How many stored messages one claim takes: small, so that idle daemons find work too.
CLAIM_BATCH = 20
# Password checks a message may have run outside the write lock, each followed by a run
# of the message again; a message naming more accounts checks the rest inside.
PASSWORD_CHECKS_OUTSIDE = 3

WriteLock = AbstractContextManager[Any]


@dataclass
class ProcessResult:
    processed: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    # the store failure that stopped the run early, if one did
    unavailable: StoreUnavailable | None = None


class DbInbox:
    def __init__(
        self,
        engine: Engine,
        clock: Clock,
        config: Config,
        write_lock: WriteLock | None = None,
        watch: DatabaseFile | None = None,
        *,
        owner: int = 0,
        claim_batch: int = CLAIM_BATCH,
        password_checks_outside: int = PASSWORD_CHECKS_OUTSIDE,
    ) -> None:
        self.engine = engine
        self.clock = clock
        self.config = config
        self.rules = operator_rules(config)
        self.write_lock = write_lock or threading.Lock()
        self.watch = watch
        # the daemon (pbm.store.claims) whose claims these are; 0 for none registered
        self.owner = owner
        self.claim_batch = claim_batch
        self.password_checks_outside = password_checks_outside

    def store_now(self, raw: bytes, via: str) -> tuple[int, bool]:
        """Store and commit `raw`; returns (id, created). Raises StoreUnavailable when
        the store failed, or when the database file was replaced meanwhile (the commit
        may have gone into the old file: the sender must deliver it again)."""
        message = arrival(raw, self.rules)  # read before the lock: parsing takes a while
        with self.write_lock, unavailable_on_failure(), session_for(self.engine) as session:
            inbound_id, created = store_inbound(session, message, via=via, now=self.clock.now())
            claims.notify(session, "inbound")
            session.commit()
            if self.watch is not None:
                self.watch.check()
        return inbound_id, created

    async def store(self, raw: bytes, via: str) -> tuple[int, bool]:
        return await asyncio.to_thread(self.store_now, raw, via)

    def store_many_now(self, raws: Sequence[bytes], via: str) -> list[tuple[int, bool]]:
        """Store and commit several messages in one transaction (a fetched IMAP batch)."""
        messages = [arrival(raw, self.rules) for raw in raws]
        with self.write_lock, unavailable_on_failure(), session_for(self.engine) as session:
            now = self.clock.now()
            results = [store_inbound(session, m, via=via, now=now) for m in messages]
            claims.notify(session, "inbound")
            session.commit()
            if self.watch is not None:
                self.watch.check()
        return results

    async def store_many(self, raws: Sequence[bytes], via: str) -> list[tuple[int, bool]]:
        return await asyncio.to_thread(self.store_many_now, raws, via)

    def pending_ids(self, limit: int) -> list[int]:
        """Claim stored messages to process: the daemons' own, and other processes'
        (`pbm mail process` from a pipe) only once they have waited FOREIGN_GRACE, so a
        pipe process that died before processing is covered without racing one that is
        still at work; none that waits for a retry after a store failure, none another
        live daemon holds."""
        now = self.clock.now()
        with self.write_lock, unavailable_on_failure(), session_for(self.engine) as session:
            ids = claims.claim_inbound(
                session,
                owner=self.owner,
                now=now,
                limit=limit,
                own_vias=OWN_VIAS,
                foreign_before=now - FOREIGN_GRACE,
            )
            session.commit()
            return ids

    def process_some(
        self,
        stop: threading.Event,
        limit: int = 200,
        processed: Callable[[], None] = lambda: None,
    ) -> ProcessResult:
        """Process stored messages one at a time (each its own transaction) until none is
        left, `limit` are done or `stop` is set: a shutdown finishes the message in hand.
        `processed` is called after each one committed (the daemon wakes its sender, so
        replies go out while later messages are processed). A message whose processing
        met a store failure waits for its retry ("deferred"); when the store cannot even
        record that, the run stops (`unavailable`)."""
        result = ProcessResult()
        try:
            while result.processed < limit and not stop.is_set():
                ids = self.pending_ids(min(self.claim_batch, limit - result.processed))
                if not ids:
                    break
                for inbound_id in ids:
                    if stop.is_set():
                        break
                    status = self._process(inbound_id)
                    result.processed += 1
                    result.statuses[status] = result.statuses.get(status, 0) + 1
                    processed()
        except StoreUnavailable as exc:
            result.unavailable = exc
        return result

    def _process(self, inbound_id: int) -> str:
        """Process one stored message under the write lock; its status. scrypt takes
        about a tenth of a second, and on SQLite the intake storing mail, the sender and
        every other message would wait for it: so a password check no cache keeps (each
        player's first command after a start, a wrong password) rolls the message back,
        runs outside the lock, and the message runs again and finds the outcome kept.
        Only the transaction decides and counts a failure, after the throttle's budget
        (pbm.services.accounts.users.authenticate): a check outside runs only where the
        transaction would have run it."""
        outside = 0
        while True:
            try:
                with self.write_lock:
                    return process_inbound(
                        self.engine,
                        inbound_id,
                        clock=self.clock,
                        config=self.config,
                        password_checks_outside=outside < self.password_checks_outside,
                    )
            except PasswordCheckNeeded as needed:
                outside += 1
                needed.run()

    def counts(self) -> dict[str, dict[str, int]]:
        """Inbound messages and outbox mails by status, for health lines and status."""
        with self.write_lock, unavailable_on_failure(), session_for(self.engine) as session:
            inbound = session.exec(
                select(InboundMessage.status, func.count()).group_by(InboundMessage.status)
            ).all()
            outbox = session.exec(
                select(OutboxMail.status, func.count()).group_by(OutboxMail.status)
            ).all()
        # Sorted: a GROUP BY comes back in any order (on PostgreSQL not SQLite's).
        return {
            "inbound": {str(s): int(n) for s, n in sorted(inbound)},
            "outbox": {str(s): int(n) for s, n in sorted(outbox)},
        }


class DbOutbox:
    """The sender's OutboxQueue over the outbox table."""

    def __init__(
        self,
        engine: Engine,
        clock: Clock,
        write_lock: WriteLock | None = None,
        *,
        owner: int = 0,
        html: HtmlParts | None = None,
    ) -> None:
        self.engine = engine
        self.clock = clock
        self.write_lock = write_lock or threading.Lock()
        self.owner = owner  # the daemon whose claims these are (pbm.store.claims)
        # What makes the HTML parts (pbm.html_parts): it reads outside the write lock,
        # the daemon's through a read-only engine (pbm.store.readonly) on SQLite, whose
        # reads neither wait for a writer nor make one wait.
        self.html = html or InProcess(engine)
        # outcomes waiting for the next record transaction, and the task that runs them
        self._to_record: list[tuple[Sequence[SendOutcome], asyncio.Future[None]]] = []
        self._recorder: asyncio.Task[None] | None = None

    def _due(self, limit: int, held: frozenset[int]) -> list[OutgoingMail]:
        """Claim due mail: no other daemon sends it while this one's heartbeat lasts.
        The HTML parts are made after the claim, outside the write lock (pbm.html_parts:
        what they read, a board up to a move, no longer changes). A failure between the
        claim and the drawing leaves the mails claimed by this daemon, whose next claim
        takes them again."""
        with self.write_lock, unavailable_on_failure(), session_for(self.engine) as session:
            rows = claims.claim_outbox(
                session, owner=self.owner, now=self.clock.now(), limit=limit, held=held
            )
            claimed = [
                (
                    OutgoingMail(
                        id=row.saved_id,
                        # VERP: a bounce names this very row (pbm.mail.bounces).
                        envelope_from=verp_address(row.envelope_from, row.saved_id, row.verp),
                        recipients=tuple(recipients_of(row)),
                        raw=row.raw,
                        attempts=row.attempts,
                        message_id=row.message_id,
                    ),
                    row.html,
                )
                for row in rows
            ]
            session.commit()
        if not claimed:
            return []
        finished = self.html.finish(
            [Unfinished(mail.raw, html, mail.recipients) for mail, html in claimed]
        )
        return [replace(mail, raw=raw) for (mail, _), raw in zip(claimed, finished, strict=True)]

    async def due(self, limit: int, held: frozenset[int] = frozenset()) -> list[OutgoingMail]:
        return await asyncio.to_thread(self._due, limit, held)

    def _record(self, outcomes: Sequence[SendOutcome]) -> None:
        now = self.clock.now()
        with self.write_lock, unavailable_on_failure(), session_for(self.engine) as session:
            mark_sent(session, [o.mail_id for o in outcomes if o.kind == "sent"], now)
            for o in outcomes:
                if o.kind == "retry":
                    assert o.delay is not None
                    mark_retry(session, o.mail_id, now, o.error or "", o.delay)
                elif o.kind == "failed":
                    mark_failed(session, o.mail_id, now, o.error or "")
            claims.release_outbox(session, [o.mail_id for o in outcomes])
            session.commit()

    async def record(self, outcomes: Sequence[SendOutcome]) -> None:
        """Record `outcomes`, committed when this returns. The sender's connections
        record at once more often than not, each waiting for the write lock: the
        outcomes that come in while one transaction runs go together in the next. The
        transactions run in a task of their own, so no connection waits for the others'
        outcomes before it takes its next mail."""
        if not outcomes:
            return
        committed = asyncio.get_running_loop().create_future()
        self._to_record.append((outcomes, committed))
        if self._recorder is None or self._recorder.done():
            self._recorder = asyncio.ensure_future(self._record_waiting())
        await committed

    async def _record_waiting(self) -> None:
        """Record what waits, one transaction at a time, until nothing does."""
        while self._to_record:
            batch, self._to_record = self._to_record, []
            try:
                await asyncio.to_thread(self._record, [o for outs, _ in batch for o in outs])
            except Exception as exc:
                for _, committed in batch:  # each waiter hears of the failure
                    if not committed.done():  # (unless it was cancelled meanwhile)
                        committed.set_exception(exc)
            except BaseException:
                # cancelled: no waiter is left waiting for a transaction that never runs
                for _, committed in batch + self._to_record:
                    committed.cancel()
                self._to_record = []
                raise
            else:
                for _, committed in batch:
                    if not committed.done():
                        committed.set_result(None)

    def depth(self) -> int:
        with session_for(self.engine) as session:
            return outbox_depth(session)
