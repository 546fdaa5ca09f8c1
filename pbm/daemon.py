"""`pbm serve`: intake, processing, outbox and periodic jobs in one asyncio process.

Intake (SMTP/LMTP listeners, IMAP) only stores messages; a processor takes stored
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
import multiprocessing
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy.engine import Engine

from pbm.clock import Clock, SystemClock
from pbm.config import Config
from pbm.errors import StoreUnavailable
from pbm.jobs import (
    JOB_SECONDS,
    apply_bot_answer,
    bot_task,
    due_bot_turns,
    run_due,
    run_for_cluster,
)
from pbm.logfmt import kv
from pbm.mail.dkim import SigningTransport, load_signer
from pbm.mail.imap_in import ImapIntake
from pbm.mail.lmtp_in import start_listener
from pbm.mail.settings import MailSettings, mail_settings
from pbm.mail.smtp_out import MaildirTransport, OutboxSender, RetryPolicy, SmtpRelay, Transport
from pbm.mailstore import DbInbox, DbOutbox, WriteLock
from pbm.privacy_jobs import run_privacy
from pbm.services.bots import Answer, BotQueue, think
from pbm.store import claims
from pbm.store.database_file import DatabaseFile
from pbm.store.engine import creation_marker, make_engine, mark_created, session_for
from pbm.store.failures import classify, describe_failure, unavailable_on_failure
from pbm.store.schema import ensure_schema

T = TypeVar("T")
log = logging.getLogger("pbm.daemon")

STATUS_FILE = "daemon-status.json"
STATUS_SECONDS = 1.0
COUNTS_SECONDS = 5.0
# Stored messages from other processes (pipe intake, CLI) and due retries are picked up
# within this many seconds even when nothing in this process wakes the workers.
IDLE_TICK_SECONDS = 1.0
PROCESS_CHUNK = 10
# While the store is unavailable the processor waits this long, doubling up to the max.
STORE_BACKOFF_SECONDS = 1.0
STORE_BACKOFF_MAX_SECONDS = 30.0
# How often the heartbeat renews the daemon's claims: well inside claims.LEASE.
HEARTBEAT_SECONDS = 5.0
# How many stored messages a daemon claims at a time on PostgreSQL: few, so that the
# messages of a burst spread over the daemons.
PG_CLAIM_BATCH = 4


@dataclass(frozen=True)
class PeriodicJob:
    """Work the daemon runs every `every_seconds` (each call makes its own transaction)."""

    name: str
    every_seconds: float
    run: Callable[[Engine, Clock, Config], object]


# Correspondence play's reminders, timeouts, vacations and digests; tournament rounds
# start from the game-end hook, so they need no job of their own.
PERIODIC_JOBS: list[PeriodicJob] = [
    PeriodicJob("correspondence", JOB_SECONDS, run_due),
    PeriodicJob("privacy", JOB_SECONDS, run_privacy),  # erasures by mail, export parts
]


@dataclass
class Counters:
    received: int = 0
    duplicates: int = 0
    processed: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    store_errors: int = 0


def status_path(config: Config) -> Path:
    return config.data_dir / STATUS_FILE


class Daemon:
    def __init__(self, config: Config, clock: Clock | None = None) -> None:
        self.config = config
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
        self.write_lock: WriteLock = contextlib.nullcontext() if self.shared else threading.Lock()
        self.inbox = DbInbox(
            self.engine,
            self.clock,
            config,
            self.write_lock,
            self.database_file,
            claim_batch=PG_CLAIM_BATCH if self.shared else PROCESS_CHUNK,
        )
        self.outbox = DbOutbox(self.engine, self.clock, self.write_lock)
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
        self.stop = asyncio.Event()
        self._thread_stop = threading.Event()
        self._process_wake = asyncio.Event()
        self._outbox_wake = asyncio.Event()
        self._servers: list[asyncio.Server] = []
        self.imap: ImapIntake | None = None
        self.started_at = self.clock.now()
        self._last_counts: dict[str, dict[str, int]] = {}

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
        self._process_wake.set()
        return [inbound_id for inbound_id, _ in results]

    # --- the loop -----------------------------------------------------------------------
    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop, sig.name)
        await asyncio.to_thread(self.prepare_store)
        await self._start_listeners()
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
        self._process_wake.set()
        self._outbox_wake.set()
        tasks = [
            asyncio.create_task(self._processor(), name="processor"),
            asyncio.create_task(self._sender(), name="outbox"),
            asyncio.create_task(self._reporter(), name="reporter"),
            asyncio.create_task(self._bots(), name="bots"),
            *(asyncio.create_task(self._periodic(job), name=job.name) for job in PERIODIC_JOBS),
        ]
        if self.settings.imap is not None:
            self.imap = ImapIntake(
                self.settings.imap,
                self.store_for("imap"),
                stop=self.stop,
                store_many=self.store_many_for("imap"),
            )
            tasks.append(asyncio.create_task(self.imap.run(), name="imap"))
        log.info(
            kv(
                "started",
                pid=os.getpid(),
                daemon=self.daemon_id,
                database=self.config.database_url,
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
        """What the LISTEN thread calls: wake the worker the notification is for (both
        for "", a new connection that may have missed some)."""

        def wake(queue: str) -> None:
            for name, event in (("inbound", self._process_wake), ("outbox", self._outbox_wake)):
                if queue in ("", name):
                    loop.call_soon_threadsafe(event.set)

        return wake

    def request_stop(self, reason: str = "request") -> None:
        if not self.stop.is_set():
            log.info(kv("stopping", reason=reason))
        self.stop.set()
        self._thread_stop.set()
        self._process_wake.set()
        self._outbox_wake.set()

    async def _start_listeners(self) -> None:
        s = self.settings
        for endpoint, lmtp in ((s.smtp_listen, False), (s.lmtp_listen, True)):
            if endpoint is None:
                continue
            store = self.store_for("lmtp" if lmtp else "smtp")
            self._servers.append(
                await start_listener(endpoint, store, lmtp=lmtp, max_bytes=s.max_message_bytes)
            )

    async def _shutdown(self, tasks: list[asyncio.Task[Any]]) -> None:
        # stop taking mail first, then let the workers finish what they hold
        for server in self._servers:
            server.close()
        for server in self._servers:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(server.wait_closed(), 5)
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
        if self.liveness is not None:
            self.liveness.close()
        self._write_status("stopped")
        await asyncio.to_thread(self.engine.dispose)
        if self.database_file is not None:
            self.database_file.close()
        log.info(kv("stopped"))

    async def _processor(self) -> None:
        backoff = 0.0
        while not self.stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._process_wake.wait(), IDLE_TICK_SECONDS)
            self._process_wake.clear()
            if self.stop.is_set():
                break
            try:
                # small chunks: replies go out while later messages are still processed
                result = await asyncio.to_thread(
                    self.inbox.process_some, self._thread_stop, PROCESS_CHUNK
                )
            except Exception as exc:
                log.exception(kv("process_error", error=repr(exc)))
                continue
            if result.unavailable is not None:
                # the store is locked, full or gone: the messages wait, and so do we
                if not backoff:
                    log.warning(kv("process_store_unavailable", error=result.unavailable))
                backoff = min(backoff * 2 or STORE_BACKOFF_SECONDS, STORE_BACKOFF_MAX_SECONDS)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop.wait(), backoff)
            elif backoff:
                backoff = 0.0
                log.info(kv("process_store_back"))
            if result.processed:
                self.counters.processed += result.processed
                for status, n in result.statuses.items():
                    self.counters.statuses[status] = self.counters.statuses.get(status, 0) + n
                log.info(kv("processed", count=result.processed, **result.statuses))
                self._outbox_wake.set()
                self._process_wake.set()  # there may be more

    async def _sender(self) -> None:
        unavailable = False
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._outbox_wake.wait(), IDLE_TICK_SECONDS)
            self._outbox_wake.clear()
            if self.stop.is_set():
                break
            try:
                await self.sender.drain(self.stop)
                unavailable = False
            except StoreUnavailable as exc:
                # mail stays queued; the next tick tries again (logged once per streak)
                if not unavailable:
                    log.warning(kv("outbox_store_unavailable", error=exc))
                unavailable = True
            except Exception as exc:
                log.exception(kv("outbox_error", error=repr(exc)))

    async def _periodic(self, job: PeriodicJob) -> None:
        while not self.stop.is_set():
            try:
                ran = await asyncio.to_thread(
                    run_for_cluster,
                    self.engine,
                    self.clock,
                    self.config,
                    job.name,
                    job.every_seconds,
                    job.run,
                )
                if ran:  # which daemon ran which due time, for the operator
                    log.info(kv("job_ran", job=job.name))
            except Exception as exc:
                if not classify(exc).temporary:
                    log.exception(kv("job_failed", job=job.name, error=repr(exc)))
                else:  # due work is still due next time
                    log.warning(
                        kv("job_store_unavailable", job=job.name, error=describe_failure(exc))
                    )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), job.every_seconds)

    async def _bots(self) -> None:
        """Play the bots' due moves: think in a pool of at most `[bots] workers` worker
        processes (intake and the outbox never wait on thinking), then apply each answer
        in its own transaction. A board is thought about by one worker at a time here;
        daemons sharing a PostgreSQL database may think about the same move, and the
        move-number check when applying lets only the first answer count."""
        loop = asyncio.get_running_loop()
        workers = self.config.bot_workers
        # spawn: the daemon has threads, and a forked child would inherit their locks.
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        thinking: dict[asyncio.Future[Answer], int] = {}  # an answer to come: its board
        queue = BotQueue()  # round robin over the players waiting
        try:
            while not self.stop.is_set():
                try:
                    await self._start_thinking(loop, pool, thinking, queue)
                except Exception as exc:
                    self._bot_failure("bots_read_failed", exc)
                if not thinking:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self.stop.wait(), IDLE_TICK_SECONDS)
                    continue
                done, _ = await asyncio.wait(
                    thinking, timeout=IDLE_TICK_SECONDS, return_when=asyncio.FIRST_COMPLETED
                )
                for future in done:
                    thinking.pop(future)
                    try:
                        answer = future.result()
                        result = await asyncio.to_thread(self._apply_bot, answer)
                    except Exception as exc:
                        self._bot_failure("bot_move_failed", exc)
                        continue
                    log.info(kv("bot", board=answer.task.turn.game_id, result=result))
                    self._outbox_wake.set()
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    async def _start_thinking(
        self,
        loop: asyncio.AbstractEventLoop,
        pool: ProcessPoolExecutor,
        thinking: dict[asyncio.Future[Answer], int],
        queue: BotQueue,
    ) -> None:
        if len(thinking) >= self.config.bot_workers:
            return
        turns = await asyncio.to_thread(self._locked, due_bot_turns)
        for turn in queue.order(turns):
            if len(thinking) >= self.config.bot_workers:
                return
            if turn.game_id in thinking.values():
                continue
            task = await asyncio.to_thread(self._locked, partial(bot_task, turn=turn))
            if task is not None:
                queue.served(turn)
                thinking[loop.run_in_executor(pool, think, task)] = turn.game_id

    def _locked(self, read: Callable[[Engine, Clock, Config], T]) -> T:
        """A read of the bots' work under the daemon's write lock, as every transaction
        of this process on SQLite (see pbm.mailstore)."""
        with self.write_lock, unavailable_on_failure():
            return read(self.engine, self.clock, self.config)

    def _apply_bot(self, answer: Answer) -> str:
        with self.write_lock, unavailable_on_failure():
            return apply_bot_answer(self.engine, self.clock, self.config, answer)

    def _bot_failure(self, event: str, exc: Exception) -> None:
        if not classify(exc).temporary:
            log.exception(kv(event, error=repr(exc)))
        else:  # the move is still due, and is thought again
            log.warning(kv(event, error=describe_failure(exc)))

    async def _reporter(self) -> None:
        last_health = last_counts = last_beat = time.monotonic()
        counts_failing = beat_failing = False
        while not self.stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), STATUS_SECONDS)
            if self.stop.is_set():
                break
            now = time.monotonic()
            if now - last_beat >= HEARTBEAT_SECONDS:
                last_beat = now
                try:
                    await asyncio.to_thread(self.heartbeat)
                    beat_failing = False
                except Exception as exc:
                    if not beat_failing:
                        log.warning(kv("heartbeat_failed", error=repr(exc)))
                    beat_failing = True
            if now - last_counts >= COUNTS_SECONDS or not self._last_counts:
                last_counts = now
                try:
                    self._last_counts = await asyncio.to_thread(self.inbox.counts)
                    counts_failing = False
                except Exception as exc:
                    if not counts_failing:  # once per streak: the store may be away a while
                        log.warning(kv("counts_failed", error=repr(exc)))
                    counts_failing = True
            self._write_status("running")
            if now - last_health >= self.settings.health_seconds:
                last_health = now
                log.info(self.health_line())

    def health_line(self) -> str:
        c = self.counters
        outbox = self._last_counts.get("outbox", {})
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
            "database": self._last_counts,
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

    async def main() -> None:
        await Daemon(config).run()

    asyncio.run(main())
