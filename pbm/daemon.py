"""`pbm serve`: intake, processing, outbox and periodic jobs in one asyncio process.

The daemon is the lifecycle only: it builds the engine, the transport and the shared
state, puts its workers together (pbm.runners: listeners, processor, sender, jobs,
bots, heartbeat), starts them and stops them in order. Intake (SMTP/LMTP listeners,
IMAP) only stores messages; a processor takes stored
messages one at a time in a worker thread (each in its own transaction) and wakes the
outbox sender, which drains the outbox. Database work runs in threads so the loop stays
responsive. SIGTERM/SIGINT stop intake, let the message in hand finish, and exit.
A health line is logged every minute and a status file is kept for `pbm mail status`.

The store failing never loses or bounces mail: the listeners answer 451 and the IMAP
intake leaves the message in its folder; a stored message whose processing met a store
failure waits for its retry (pbm.intake); the workers back off while the store
is unavailable. On SQLite the daemon keeps to the database file it started with
(pbm.store.database_file.DatabaseFile): deleted or replaced, it is noticed before the
next message, and mail waits until a pbm database is back at that path.

Scale-out (docs/scale-out.md): on PostgreSQL any number of daemons share one database.
Each registers a heartbeat row and claims the messages it processes and the mails it
sends in the database (pbm.store.claims), runs the periodic jobs once per due time for
the cluster (pbm.jobs.run_for_cluster), and is woken by LISTEN/NOTIFY when another
process stores a message or queues mail. On SQLite one daemon holds the file (an OS
lock beside it), and a second one refuses to start.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pbm.app import PERIODIC_JOBS, initialize
from pbm.clock import Clock, SystemClock
from pbm.config import Config
from pbm.errors import StoreUnavailable
from pbm.fair_lock import FairLock
from pbm.html_parts import HtmlParts, InProcess, PictureWorker
from pbm.jobs import (
    PeriodicJob,
)
from pbm.logfmt import kv
from pbm.mail.dkim import SigningTransport, load_signer
from pbm.mail.imap_in import ImapIntake
from pbm.mail.settings import MailSettings, mail_settings
from pbm.mail.smtp_out import MaildirTransport, OutboxSender, RetryPolicy, SmtpRelay, Transport
from pbm.mailstore import DbInbox, DbOutbox, WriteLock
from pbm.runners.base import Runner, Signals
from pbm.runners.bots import Bots
from pbm.runners.counters import Counters
from pbm.runners.heartbeat import Heartbeat
from pbm.runners.jobs import JobRunner
from pbm.runners.listeners import Imap, Listeners
from pbm.runners.processor import PROCESS_CHUNK, Processor
from pbm.runners.sender import Sender
from pbm.runners.web import Web
from pbm.store import claims
from pbm.store.database_file import DatabaseFile
from pbm.store.engine import creation_marker, make_engine, mark_created, session_for, shown_url
from pbm.store.failures import unavailable_on_failure
from pbm.store.readonly import make_read_engine
from pbm.store.schema import ensure_schema

T = TypeVar("T")
log = logging.getLogger("pbm.daemon")

STATUS_FILE = "daemon-status.json"
# How many stored messages a daemon claims at a time on PostgreSQL: few, so that the
# messages of a burst spread over the daemons.
PG_CLAIM_BATCH = 4


def status_path(config: Config) -> Path:
    return config.data_dir / STATUS_FILE


class Daemon:
    def __init__(
        self,
        config: Config,
        clock: Clock | None = None,
        jobs: Sequence[PeriodicJob] = PERIODIC_JOBS,
    ) -> None:
        self.config = config
        self.jobs = tuple(jobs)
        self.clock = clock or SystemClock()
        self.settings: MailSettings = mail_settings(config)
        self.database_file = DatabaseFile.of(config.database_url)
        # A first serve on a data directory that never held a database makes one; after
        # that a missing database is lost, and is never quietly made anew.
        self.first_run = self.database_file is not None and not (
            creation_marker(self.database_file.path).exists()
        )
        self.engine = make_engine(
            config.database_url,
            watch=self.database_file,
            create=self.first_run,
            busy_timeout=config.busy_timeout_seconds,
        )
        self.shared = claims.is_postgres(self.engine)  # other daemons may share the store
        # see pbm.mailstore: one writer at a time on SQLite, claims on PostgreSQL
        self.write_lock: WriteLock = contextlib.nullcontext() if self.shared else FairLock()
        # On an SQLite file the sender reads what it draws through a read-only engine,
        # outside the write lock (see DbOutbox); PostgreSQL needs no second engine.
        self.read_engine = (
            make_read_engine(config.database_url, config.busy_timeout_seconds)
            if self.database_file is not None
            else self.engine
        )
        # Whether another connection, or another process, can read the store: a file or
        # a server can, a database in memory cannot.
        read_apart = self.database_file is not None or self.shared
        self.inbox = DbInbox(
            self.engine,
            self.clock,
            config,
            self.write_lock,
            self.database_file,
            claim_batch=PG_CLAIM_BATCH if self.shared else PROCESS_CHUNK,
        )
        # The HTML parts are made in a worker process where it can read the store, else
        # here; here too when the worker fails.
        here = InProcess(self.read_engine)
        self.html_parts: HtmlParts = (
            PictureWorker(config, here) if config.picture_worker and read_apart else here
        )
        self.outbox = DbOutbox(self.engine, self.clock, self.write_lock, html=self.html_parts)
        self.daemon_id = 0  # the heartbeat row, once registered (prepare_store)
        self.liveness: claims.Liveness | None = None  # PostgreSQL: the sign of life
        self._listener: threading.Thread | None = None  # LISTEN/NOTIFY (PostgreSQL)
        self.transport: Transport
        relay = self.settings.relay
        if relay is not None:
            self.transport = SmtpRelay(relay)
        else:
            self.transport = MaildirTransport(self.settings.outbox_maildir)
        if self.settings.dkim is not None:
            # signed last, after the HTML part: nothing changes the mail afterwards
            self.transport = SigningTransport(self.transport, load_signer(self.settings.dkim))
        if relay is not None:
            self.sender = OutboxSender(
                self.outbox,
                self.transport,
                rate=relay.rate,
                retry=RetryPolicy(
                    relay.retry_base_seconds, relay.retry_max_seconds, relay.max_attempts
                ),
            )
        else:
            self.sender = OutboxSender(self.outbox, self.transport)
        self.counters = Counters()
        self.signals = Signals()
        self.stop = self.signals.stop
        self._thread_stop = threading.Event()
        self.imap: ImapIntake | None = None
        self.started_at = self.clock.now()
        # The daemon's workers (pbm.runners), put together here and started by `run`.
        self.listeners = Listeners(self.settings, self.store_for)
        self.reporter = Heartbeat(
            self.signals,
            beat=self.heartbeat,
            counts=self.inbox.counts,
            write_status=self._write_status,
            health_line=self.health_line,
            health_seconds=self.settings.health_seconds,
        )
        self.runners: list[Runner] = [
            Processor(self.signals, self.inbox, self.counters, self._thread_stop),
            Sender(self.signals, self.sender),
            self.reporter,
            Bots(self.signals, self.engine, self.clock, config, self.write_lock),
            *(JobRunner(self.signals, job, self.engine, self.clock, config) for job in self.jobs),
        ]
        if config.web_listen is not None:  # the pages (pbm.web), in a child process
            self.runners.append(Web(self.signals, config))

    # --- intake -------------------------------------------------------------------------
    def store_for(self, via: str) -> Callable[[bytes], Any]:
        async def store(raw: bytes) -> int:
            return (await self._stored(via, [raw]))[0]

        return store

    def store_many_for(self, via: str) -> Callable[[list[bytes]], Any]:
        async def store_many(raws: list[bytes]) -> list[int]:
            return await self._stored(via, raws)

        return store_many

    async def _stored(self, via: str, raws: list[bytes]) -> list[int]:
        try:
            results = await self.inbox.store_many(raws, via)
        except StoreUnavailable:
            self.counters.store_errors += 1
            raise
        except Exception as exc:
            self.counters.store_errors += 1
            log.exception(kv("store_failed", via=via, error=repr(exc)))
            raise
        for inbound_id, created in results:
            if created:
                self.counters.received += 1
            else:
                self.counters.duplicates += 1
                log.info(kv("duplicate", via=via, id=inbound_id))
        self.signals.process.set()
        return [inbound_id for inbound_id, _ in results]

    # --- the loop -----------------------------------------------------------------------
    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop, sig.name)
        await asyncio.to_thread(self.prepare_store)
        try:
            await self.listeners.start()
        except BaseException:
            # a port in use ends the start; its row would show a daemon "gone" for ever
            with contextlib.suppress(StoreUnavailable):
                await asyncio.to_thread(self._signed_off)
            raise
        listener = threading.Thread(
            target=claims.listen,
            args=(self.engine, self._notified(loop), self._thread_stop),
            name="pbm-listen",
            daemon=True,
        )
        listener.start()
        self._listener = listener
        # What waits from before the start (a killed predecessor's mail) goes first, now,
        # not at the first idle tick.
        self.signals.process.set()
        self.signals.outbox.set()
        if self.settings.imap is not None:
            self.imap = ImapIntake(
                self.settings.imap,
                self.store_for("imap"),
                stop=self.stop,
                store_many=self.store_many_for("imap"),
            )
            self.runners.append(Imap(self.signals, self.imap))
        tasks = [runner.start() for runner in self.runners]
        log.info(
            kv(
                "started",
                pid=os.getpid(),
                daemon=self.daemon_id,
                database=shown_url(self.config.database_url),  # not its password
            )
        )
        self._write_status("running")
        try:
            await self.stop.wait()
        finally:
            await self._shutdown(tasks)
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)

    def prepare_store(self) -> None:
        """Be the one daemon on a SQLite file (a second one stops here, naming the
        first); upgrade the schema where pbm may (SQLite; created only on a first run),
        else check it is current (SchemaNotReady names `pbm db init` or `pbm db
        upgrade`); keep to the database file, marked as created; register this daemon's
        heartbeat row, the owner of its claims (on PostgreSQL with its liveness lock);
        and take over the claims of daemons known dead."""
        if self.database_file is not None:
            self.database_file.hold_for_serve()
        ensure_schema(self.engine, create=self.first_run)
        if self.database_file is not None:
            self.database_file.arm(self.engine)
            mark_created(self.database_file.path)
        s = self.settings
        listen = " ".join(
            f"{name} {endpoint}"
            for name, endpoint in (("smtp", s.smtp_listen), ("lmtp", s.lmtp_listen))
            if endpoint is not None
        )
        with self.write_lock, unavailable_on_failure(), session_for(self.engine) as session:
            self.daemon_id = claims.register_daemon(
                session,
                host=socket.gethostname(),
                pid=os.getpid(),
                now=self.clock.now(),
                listen=listen,
            )
            session.commit()
        if self.shared:
            self.liveness = claims.Liveness(self.engine, self.daemon_id)
            with unavailable_on_failure():
                self.liveness.renew()
        # A predecessor killed a moment ago left claims: its mail is ours now, not after
        # the lease, and before any newer mail.
        with self.write_lock, unavailable_on_failure(), session_for(self.engine) as session:
            claims.release_dead(session, self.daemon_id)
            session.commit()
        self.inbox.owner = self.outbox.owner = self.daemon_id

    def heartbeat(self) -> None:
        """Tell the cluster this daemon lives (renewing its claims and its liveness
        lock) and release the claims of daemons known dead or silent past their lease."""
        if self.liveness is not None:
            with unavailable_on_failure():
                self.liveness.renew()
        with self.write_lock, unavailable_on_failure(), session_for(self.engine) as session:
            claims.beat(session, self.daemon_id, self.clock.now(), self._counter_values())
            session.commit()

    def _signed_off(self) -> None:
        with self.write_lock, unavailable_on_failure(), session_for(self.engine) as session:
            claims.stop_daemon(session, self.daemon_id, self.clock.now())
            session.commit()

    def _notified(self, loop: asyncio.AbstractEventLoop) -> Callable[[str], None]:
        """What the LISTEN thread calls: wake the runner the notification is for (both
        for "", a new connection that may have missed some)."""

        def wake(queue: str) -> None:
            for name, event in (("inbound", self.signals.process), ("outbox", self.signals.outbox)):
                if queue in ("", name):
                    loop.call_soon_threadsafe(event.set)

        return wake

    def request_stop(self, reason: str = "request") -> None:
        if not self.stop.is_set():
            log.info(kv("stopping", reason=reason))
        self.stop.set()
        self._thread_stop.set()
        for runner in self.runners:
            runner.stop()

    async def _shutdown(self, tasks: list[asyncio.Task[Any]]) -> None:
        # stop taking mail first, then let the workers finish what they hold
        await self.listeners.stop()
        done, pending = await asyncio.wait(tasks, timeout=60)
        for task in pending:
            task.cancel()
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                log.error(kv("task_failed", task=task.get_name(), error=task.exception()))
        await self.transport.close()
        if self._listener is not None:
            await asyncio.to_thread(self._listener.join, 5)
        if self.daemon_id:
            try:
                await asyncio.to_thread(self._signed_off)
            except StoreUnavailable as exc:  # its claims then run out with the lease
                log.warning(kv("sign_off_failed", error=exc))
        self._write_status("stopped")
        await asyncio.to_thread(self.close)
        log.info(kv("stopped"))

    def close(self) -> None:
        """Let go of what the daemon holds: its liveness lock, its picture worker, its
        engines and its database file (the end of `run`, and of a test's daemon)."""
        if self.liveness is not None:
            self.liveness.close()
        self.html_parts.close()
        self.engine.dispose()
        if self.read_engine is not self.engine:
            self.read_engine.dispose()
        if self.database_file is not None:
            self.database_file.close()

    def health_line(self) -> str:
        c = self.counters
        outbox = self.reporter.last_counts.get("outbox", {})
        return kv(
            "health",
            received=c.received,
            duplicates=c.duplicates,
            processed=c.processed,
            failed=c.statuses.get("failed", 0),
            sent=self.sender.sent,
            send_deferred=self.sender.deferred,
            send_failed=self.sender.failed,
            outbox_depth=outbox.get("queued", 0),
            imap=self._imap_state(),
        )

    def _imap_state(self) -> str:
        if self.imap is None:
            return "off"
        return "connected" if self.imap.state.connected else "disconnected"

    def _counter_values(self) -> dict[str, int]:
        c = self.counters
        return {
            "received": c.received,
            "duplicates": c.duplicates,
            "processed": c.processed,
            "failed": c.statuses.get("failed", 0),
            "sent": self.sender.sent,
            "send_deferred": self.sender.deferred,
            "send_failed": self.sender.failed,
        }

    def status(self, state: str) -> dict[str, Any]:
        c = self.counters
        s = self.settings
        imap = None
        if self.imap is not None:
            st = self.imap.state
            imap = {
                "host": s.imap.host if s.imap else None,
                "connected": st.connected,
                "idle": st.idle_supported,
                "move": st.move_supported,
                "stored": st.stored,
                "reconnects": st.reconnects,
                "last_error": st.last_error,
            }
        return {
            "state": state,
            "pid": os.getpid(),
            "daemon_id": self.daemon_id,
            "started_at": self.started_at.isoformat(timespec="seconds"),
            "updated_at": self.clock.now().isoformat(timespec="seconds"),
            "listen": {
                "smtp": str(s.smtp_listen) if s.smtp_listen else None,
                "lmtp": str(s.lmtp_listen) if s.lmtp_listen else None,
            },
            "imap": imap,
            # what is wrong with the database file right now (gone, replaced), if anything
            "store_problem": self.database_file.incident if self.database_file else None,
            "outgoing": f"relay {s.relay.host}:{s.relay.port}"
            if s.relay
            else f"maildir {s.outbox_maildir}",
            "counters": {
                "received": c.received,
                "duplicates": c.duplicates,
                "store_errors": c.store_errors,
                "processed": c.processed,
                **{f"processed_{k}": v for k, v in sorted(c.statuses.items())},
                "sent": self.sender.sent,
                "send_deferred": self.sender.deferred,
                "send_failed": self.sender.failed,
            },
            "database": self.reporter.last_counts,
        }

    def _write_status(self, state: str) -> None:
        path = status_path(self.config)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.status(state), indent=2) + "\n", encoding="utf-8")
            tmp.replace(path)  # readers never see half a file
        except OSError as exc:
            log.warning(kv("status_write_failed", path=path, error=repr(exc)))


def serve(config: Config) -> None:
    """Run the daemon until SIGTERM/SIGINT."""

    app = initialize(config)

    async def main() -> None:
        await Daemon(app.config, jobs=app.jobs).run()

    asyncio.run(main())
