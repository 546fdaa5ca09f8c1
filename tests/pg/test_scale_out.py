"""Several daemons on one PostgreSQL (docs/scale-out.md): the work claimed in the
database, each message processed once, each mail sent once, each periodic job once per
due time, and the work of a daemon that stopped beating taken over after its lease.

The daemons here are their working parts (DbInbox, DbOutbox, run_for_cluster) with an
owner each, run in threads on one database, as `pbm serve` runs them."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from sqlmodel import col, select

from pbm.clock import Clock, FrozenClock
from pbm.config import Config
from pbm.games import get_game
from pbm.intake import process_inbound
from pbm.jobs import run_for_cluster
from pbm.mail.smtp_out import OutboxSender, OutgoingMail
from pbm.mailstore import DbInbox, DbOutbox
from pbm.services.play.boards import replay
from pbm.store import claims, queries
from pbm.store.engine import session_for
from pbm.store.models import BoardRow, InboundMessage, Move, OutboxMail
from tests.server.conftest import Server, board_row, legal_texts

NO_LOCK = contextlib.nullcontext()
DEADLINE_SECONDS = 60.0  # every loop here ends by count, and by this at the latest


def inbox_of(server: Server, owner: int, batch: int = 4) -> DbInbox:
    return DbInbox(
        server.engine, server.clock, server.config, NO_LOCK, owner=owner, claim_batch=batch
    )


def drain_inboxes(inboxes: list[DbInbox]) -> Counter[str]:
    """Run every inbox's processor in its own thread until nothing is left."""
    stop = threading.Event()
    deadline = time.monotonic() + DEADLINE_SECONDS

    def work(inbox: DbInbox) -> Counter[str]:
        seen: Counter[str] = Counter()
        for _ in range(10_000):
            result = inbox.process_some(stop, 10)
            assert result.unavailable is None, result.unavailable
            seen.update(result.statuses)
            if not result.processed or time.monotonic() > deadline:
                break
        return seen

    with ThreadPoolExecutor(max_workers=len(inboxes)) as pool:
        totals: Counter[str] = Counter()
        for part in pool.map(work, inboxes):
            totals.update(part)
    return totals


def test_three_daemons_apply_round_robin_moves_once_each(server: Server) -> None:
    """Moves on 12 boards stored at three daemons in turn, each move twice (two copies
    at two daemons, as when a player's client sends it twice): every move applied once,
    every board's position what a replay of its moves gives, every message done."""
    boards, rounds = 12, 5
    pairs = [(f"p{i}a", f"p{i}b") for i in range(boards)]
    for a, b in pairs:
        server.signup(a)
        server.signup(b)
        assert server.send(f"{a}@players.example", f"quarto challenge {a} {b}") == "done"
    inboxes = [inbox_of(server, owner) for owner in (1, 2, 3)]
    rules = get_game("quarto")
    at = 0
    for ply in range(1, rounds + 1):
        for i, (a, b) in enumerate(pairs):
            board = str(101 + i)
            row = board_row(server, "quarto", board)
            assert row is not None and row.to_move is not None
            mover = (a, b)[row.to_move]
            move = legal_texts(server, "quarto", board)[ply % 3]
            subject = f"quarto move {board} {mover} secret {move}#{ply}"
            for _copy in range(2):
                raw = server.raw(f"{mover}@players.example", subject)
                inboxes[at % 3].store_now(raw, "lmtp")
                at += 1
        statuses = drain_inboxes(inboxes)
        assert statuses == {"done": 2 * boards}, statuses
    with session_for(server.engine) as session:
        games = list(session.exec(select(BoardRow).where(BoardRow.game == "quarto")))
        assert len(games) == boards
        for row in games:
            texts = [m.text for m in queries.moves_of(session, row.saved_id)]
            assert row.move_count == len(texts) == rounds
            state = replay(rules, row.options, texts)
            assert rules.dump(state) == row.position
        left = session.exec(select(InboundMessage).where(InboundMessage.status != "done"))
        assert list(left) == []
        held = session.exec(select(InboundMessage).where(col(InboundMessage.claimed_by) > 0))
        assert list(held) == []  # processing released every claim
        assert len(list(session.exec(select(Move)))) == boards * rounds


class Recording:
    """A transport that keeps what it was given (by Message-ID), slowly enough that the
    senders overlap."""

    lanes = 1

    def __init__(self, sent: Counter[str]) -> None:
        self.sent = sent

    async def send(self, mail: OutgoingMail) -> dict[str, str]:
        await asyncio.sleep(0.002)
        self.sent[mail.message_id] += 1
        return {}

    async def close(self) -> None:
        return None


def queue_mail(server: Server, n: int) -> None:
    """`n` mails in the outbox: help answers to n strangers."""
    for i in range(n):
        assert server.send(f"stranger{i}@elsewhere.example", "help") == "done"


def test_three_senders_send_each_mail_once(server: Server) -> None:
    queue_mail(server, 30)
    with session_for(server.engine) as session:
        queued = len(list(session.exec(select(OutboxMail))))
    assert queued >= 30
    sent: Counter[str] = Counter()

    async def main() -> list[int]:
        senders = [
            OutboxSender(
                DbOutbox(server.engine, server.clock, NO_LOCK, owner=o), Recording(sent), batch=3
            )
            for o in (1, 2, 3)
        ]
        return await asyncio.wait_for(asyncio.gather(*(s.drain() for s in senders)), 60)

    handled = asyncio.run(main())
    assert sum(handled) == queued
    assert all(n > 0 for n in handled), handled  # the work was shared
    assert len(sent) == queued and set(sent.values()) == {1}
    with session_for(server.engine) as session:
        rows = list(session.exec(select(OutboxMail)))
    assert {r.status for r in rows} == {"sent"}
    assert {r.claimed_by for r in rows} == {None}


def test_a_dead_senders_mails_are_taken_over_after_its_lease(server: Server) -> None:
    queue_mail(server, 6)
    clock = server.clock
    dead = DbOutbox(server.engine, clock, NO_LOCK, owner=1)
    alive = DbOutbox(server.engine, clock, NO_LOCK, owner=2)
    taken = asyncio.run(dead.due(4))  # claimed, then the daemon dies: never recorded
    assert len(taken) == 4
    rest = asyncio.run(alive.due(10))
    assert {m.id for m in rest}.isdisjoint(m.id for m in taken) and len(rest) == 2
    clock.advance(claims.LEASE - timedelta(seconds=1))
    assert [m.id for m in asyncio.run(alive.due(10))] == [m.id for m in rest]  # its own
    clock.advance(timedelta(seconds=2))
    again = asyncio.run(alive.due(10))
    assert {m.id for m in again} == {m.id for m in taken} | {m.id for m in rest}


def test_a_dead_daemons_messages_are_processed_once_after_its_lease(server: Server) -> None:
    server.signup("alice")
    inbox_ids = [
        inbox_of(server, 1).store_now(server.raw("alice@players.example", "help"), "lmtp")[0]
        for _ in range(3)
    ]
    dead, alive = inbox_of(server, 1, batch=10), inbox_of(server, 2, batch=10)
    # claimed, then the daemon dies; one sender's later mail waits for the first
    assert dead.pending_ids(10) == inbox_ids[:1]
    assert alive.process_some(threading.Event()).processed == 0
    server.clock.advance(claims.LEASE + timedelta(seconds=1))
    result = alive.process_some(threading.Event())
    assert result.statuses == {"done": 3}
    # the dead daemon, back from the dead, finds them processed: nothing runs twice
    assert dead.process_some(threading.Event()).processed == 0
    help_mails = [m for m in server.new_mail() if m.subject == "Help pbm"]
    assert len(help_mails) == 3


def two_live_daemons(server: Server) -> tuple[int, int, list[claims.Liveness]]:
    """Four mails queued and two daemons registered, each holding its liveness lock."""
    queue_mail(server, 4)
    now = server.clock.now()
    with session_for(server.engine) as session:
        one = claims.register_daemon(session, host="h1", pid=11, now=now, listen="lmtp a")
        two = claims.register_daemon(session, host="h2", pid=22, now=now, listen="")
        session.commit()
    lives = [claims.Liveness(server.engine, daemon) for daemon in (one, two)]
    for life in lives:
        life.renew()
    return one, two, lives


def test_heartbeats_show_the_cluster_and_release_a_silent_daemons_claims(
    server: Server,
) -> None:
    clock = server.clock
    # both processes live (their liveness locks held); one stops beating, as if hung
    one, two, lives = two_live_daemons(server)
    assert len(asyncio.run(DbOutbox(server.engine, clock, NO_LOCK, owner=one).due(3))) == 3
    clock.advance(claims.LEASE - timedelta(seconds=5))
    with session_for(server.engine) as session:
        claims.beat(session, two, clock.now(), {"processed": 7})
        session.commit()
        seen = {d.id: d for d in claims.daemons(session, clock.now())}
    assert (seen[one].state, seen[one].mails) == ("running", 3)
    assert (seen[two].state, seen[two].counters) == ("running", {"processed": 7})
    clock.advance(timedelta(seconds=10))  # one has been silent past its lease
    with session_for(server.engine) as session:
        claims.beat(session, two, clock.now(), {"processed": 8})
        session.commit()
        seen = {d.id: d for d in claims.daemons(session, clock.now())}
        still_claimed = session.exec(select(OutboxMail).where(col(OutboxMail.claimed_by) == one))
        assert list(still_claimed) == []
    assert (seen[one].state, seen[one].mails) == ("gone", 0)
    assert seen[two].state == "running"
    with session_for(server.engine) as session:
        claims.stop_daemon(session, two, clock.now())
        session.commit()
        assert claims.daemons(session, clock.now())[1].state == "stopped"
    for life in lives:
        life.close()


def test_a_dead_daemons_claims_are_released_at_the_next_beat_not_after_the_lease(
    server: Server,
) -> None:
    """A daemon whose process died (its liveness lock gone with its connection) loses
    its claims at the next heartbeat of any daemon, well inside its lease."""
    clock = server.clock
    dead, alive, (dead_life, alive_life) = two_live_daemons(server)
    taken = asyncio.run(DbOutbox(server.engine, clock, NO_LOCK, owner=dead).due(3))
    assert len(taken) == 3
    with session_for(server.engine) as session:
        claims.beat(session, alive, clock.now(), {})
        session.commit()
    # alive: the claims hold
    assert len(asyncio.run(DbOutbox(server.engine, clock, NO_LOCK, owner=alive).due(10))) == 1
    dead_life.close()  # the process dies: PostgreSQL drops its lock with the connection
    clock.advance(timedelta(seconds=1))
    for _ in range(50):  # the server ends the closed connection's session within moments
        with session_for(server.engine) as session:
            claims.beat(session, alive, clock.now(), {})
            session.commit()
            states = {d.id: d.state for d in claims.daemons(session, clock.now())}
        if states[dead] == "gone":
            break
        time.sleep(0.1)
    assert states == {dead: "gone", alive: "running"}  # at once, not after the lease
    again = asyncio.run(DbOutbox(server.engine, clock, NO_LOCK, owner=alive).due(10))
    assert {m.id for m in taken} <= {m.id for m in again}
    alive_life.close()


def test_a_periodic_job_runs_once_per_due_time_while_two_daemons_run(server: Server) -> None:
    ran: list[str] = []
    start = threading.Barrier(2, timeout=10)

    def job(_engine: object, _clock: Clock, _config: Config) -> dict[str, int]:
        ran.append(threading.current_thread().name)
        time.sleep(0.3)  # long enough that the other daemon tries meanwhile
        return {"runs": len(ran), "idle": 0}

    def daemon(clock: FrozenClock) -> dict[str, int] | None:
        start.wait()
        return run_for_cluster(server.engine, clock, server.config, "test-job", 300.0, job)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(daemon, [server.clock, server.clock]))
    # what the one run did; None from the daemon that did not run it
    assert sorted(results, key=bool) == [None, {"runs": 1, "idle": 0}] and len(ran) == 1
    # later in the same due time: done already, by whichever daemon asks
    server.clock.advance(timedelta(seconds=10))
    done = run_for_cluster(server.engine, server.clock, server.config, "test-job", 300.0, job)
    assert done is None
    server.clock.advance(timedelta(seconds=300))
    done = run_for_cluster(server.engine, server.clock, server.config, "test-job", 300.0, job)
    assert done == {"runs": 2, "idle": 0}
    assert len(ran) == 2


def test_storing_a_message_notifies_listening_daemons(server: Server) -> None:
    heard: list[str] = []
    stop = threading.Event()
    ready = threading.Event()

    def on_notify(queue: str) -> None:
        heard.append(queue)
        ready.set()

    listener = threading.Thread(target=claims.listen, args=(server.engine, on_notify, stop, 0.2))
    listener.start()
    try:
        assert ready.wait(10)  # "" once listening
        inbox_of(server, 1).store_now(server.raw("x@players.example", "help"), "lmtp")
        deadline = time.monotonic() + 10
        while "inbound" not in heard and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "inbound" in heard
        inbox_of(server, 1).process_some(threading.Event())
        while "outbox" not in heard and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "outbox" in heard
    finally:
        stop.set()
        listener.join(10)
    assert not listener.is_alive()


def blocked(server: Server, query: str, holder_pid: object) -> bool:
    """Whether a backend other than the holder waits for a lock (asked on a connection
    of its own: pg_stat_activity is a snapshot per transaction)."""
    with server.engine.connect() as conn:
        return bool(conn.exec_driver_sql(query, {"pid": holder_pid}).scalar())


def test_a_deadlock_between_two_daemons_is_retried_at_once(server: Server) -> None:
    """A `multiple` message moving on boards 101 then 102, while another daemon's
    transaction holds 102 and then asks for 101: PostgreSQL aborts one of the two
    (SQLSTATE 40P01). The message's whole transaction runs again at once, and both of
    its moves are applied once (not deferred for the store-failure backoff)."""
    server.signup("alice")
    server.signup("bob")
    for _ in range(2):
        assert server.send("alice@players.example", "quarto challenge alice bob") == "done"
    first, second = legal_texts(server, "quarto", "101")[0], legal_texts(server, "quarto", "102")[1]
    body = f"quarto move 101 alice secret {first}\nquarto move 102 alice secret {second}\n"
    inbox = inbox_of(server, 1)
    inbound_id, _ = inbox.store_now(server.raw("alice@players.example", "multiple", body), "lmtp")
    statuses: list[str] = []
    holder = server.engine.connect()
    holder_pid = holder.exec_driver_sql("SELECT pg_backend_pid()").scalar()
    try:
        # (in the transaction the query above began) the other daemon's deadlock check
        # comes after this one's: this message is the transaction PostgreSQL aborts
        holder.exec_driver_sql("SET LOCAL deadlock_timeout = '30s'")
        lock = "SELECT id FROM games WHERE game = 'quarto' AND board = %(board)s FOR UPDATE"
        holder.exec_driver_sql(lock, {"board": "102"})
        worker = threading.Thread(
            target=lambda: statuses.append(
                process_inbound(server.engine, inbound_id, clock=server.clock, config=server.config)
            )
        )
        worker.start()
        waiting = (
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND pid <> %(pid)s AND datname = current_database()"
        )
        deadline = time.monotonic() + 20
        while not blocked(server, waiting, holder_pid):
            assert time.monotonic() < deadline and worker.is_alive()
            time.sleep(0.02)
        holder.exec_driver_sql(lock, {"board": "101"})  # the cycle: one of us is aborted
        holder.rollback()
    finally:
        holder.close()
    worker.join(DEADLINE_SECONDS)
    assert statuses == ["done"]
    with session_for(server.engine) as session:
        row = session.get(InboundMessage, inbound_id)
        assert row is not None and (row.status, row.attempts) == ("done", 0)
        for board, text in (("101", first), ("102", second)):
            game = queries.game_by_board(session, "quarto", board)
            assert game is not None
            assert [m.text for m in queries.moves_of(session, game.saved_id)] == [text]
