"""`pbm serve` end to end against the real stack: players mail in over SMTP, pbm takes the
mail over IMAP IDLE (or LMTP, or its SMTP listener), and players read the replies from
their own IMAP mailboxes."""

from __future__ import annotations

import contextlib
import random
import re
import signal
import sqlite3
import threading
import time
from email.message import EmailMessage

import pytest
from sqlmodel import func, select

from pbm.games import GAMES, AnyGame
from pbm.store.engine import session_for
from pbm.store.models import BoardRow, InboundMessage, OutboxMail, User
from pbm.store.models_mail import BounceEvent

from .conftest import PbmServer, Postbox, plain_text, sign_up, wait_until

pytestmark = [pytest.mark.mailstack, pytest.mark.slow]

MOVE_TIMEOUT = 30.0
MAX_MOVES = 250


def choose(game: AnyGame, state: object, rng: random.Random) -> object:
    """A legal move that ends the game when one does (keeps games short), else a random one."""
    moves = list(game.legal_moves(state))
    finishing = [m for m in moves[:300] if game.outcome(game.apply(state, m)) is not None]
    return finishing[0] if finishing else rng.choice(moves)


def play_by_mail(
    server: PbmServer, name: str, players: tuple[str, str], boxes: dict[str, Postbox], seed: int
) -> tuple[str, int, object]:
    """Challenge, then play the whole game move by move; returns (board, moves, outcome)."""
    game = GAMES[name]
    first, second = players
    server.stack.send(first, "pbm@example.test", f"{name} challenge {first} {second}")
    title = re.escape(game.title)
    new_board = re.compile(rf"New {title} Board (\d+)\b")
    found = boxes[first].wait_for(lambda m: bool(new_board.search(str(m["Subject"]))))
    assert found, f"no new {name} board: {boxes[first].subjects()}"
    named = new_board.search(str(found[0]["Subject"]))
    assert named is not None  # the predicate found it
    board = named.group(1)
    about_board = re.compile(rf"\b{title} Board {board}\b")

    def board_mail(m: EmailMessage) -> bool:
        return bool(about_board.search(str(m["Subject"])))

    rng = random.Random(seed)
    state = game.new_state()
    moves = 0
    while game.outcome(state) is None and moves < MAX_MOVES:
        seat = game.to_move(state)
        assert seat is not None  # the game is not over
        mover = players[seat]
        move = choose(game, state, rng)
        text = game.format_move(state, move)
        server.stack.send(mover, "pbm@example.test", f"{name} move {board} {mover} secret {text}")
        state = game.apply(state, move)
        moves += 1
        for player in players:
            # the challenge mail plus one mail per move, to each player
            got = boxes[player].wait_for(board_mail, n=moves + 1, timeout=MOVE_TIMEOUT)
            assert len(got) == moves + 1, (
                f"{name} board {board} move {moves} ({text}): {player} has "
                f"{[str(m['Subject']) for m in got]}\n{server.log()}"
            )
    outcome = game.outcome(state)
    assert outcome is not None, f"{name} did not end in {MAX_MOVES} moves"
    for player in players:
        last = boxes[player].wait_for(board_mail, n=moves + 1)[-1]
        # a finished board names no one to move, and its mail says when it ended
        assert re.search(rf"Board {board}$", str(last["Subject"]))
        assert "Game ended" in plain_text(last)
    return board, moves, outcome


def test_every_game_played_whole_by_mail(pbm_server: PbmServer) -> None:
    pbm_server.start()
    boxes = sign_up(pbm_server, "alice", "bob", "carol")
    pairs = [("alice", "bob"), ("bob", "carol"), ("carol", "alice")]
    results: dict[str, tuple[str, int, object]] = {}
    errors: list[BaseException] = []

    def run(name: str, players: tuple[str, str], seed: int) -> None:
        try:
            results[name] = play_by_mail(pbm_server, name, players, boxes, seed)
        except BaseException as exc:  # reported below, with the game's name
            errors.append(exc)

    # the games run side by side, as on a real server; each thread waits on its own board
    threads = [
        threading.Thread(target=run, args=(name, pairs[i % 3], 1), name=name)
        for i, name in enumerate(sorted(GAMES))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors[0]
    assert sorted(results) == sorted(GAMES)
    with session_for(pbm_server.engine()) as session:
        statuses = dict(session.exec(select(BoardRow.game, BoardRow.status)).all())
        failed = session.exec(
            select(func.count())
            .select_from(InboundMessage)
            .where(InboundMessage.status == "failed")
        ).one()
    assert statuses == dict.fromkeys(GAMES, "finished")
    assert failed == 0


def test_the_same_message_delivered_twice_runs_once(pbm_server: PbmServer) -> None:
    pbm_server.start()
    mid = "<dup.signup.1@example.test>"
    pbm_server.stack.send("carol", "pbm@example.test", "signup carol secret", message_id=mid)
    pbm_server.stack.send("carol", "pbm@example.test", "signup carol secret", message_id=mid)
    # both copies were taken from the inbox (filed in Processed) ...
    assert pbm_server.stack.wait_count("pbm", 2, folder="Processed") == 2
    box = Postbox(pbm_server.stack, "carol")
    assert len(box.wait_for(lambda m: "Welcome" in str(m["Subject"]))) == 1
    # ... and the message ran once: one row, one reply queued
    assert [r.message_id for r in pbm_server.rows(InboundMessage)] == [mid]
    assert len(pbm_server.rows(OutboxMail)) == 1


def test_sigkill_in_the_middle_of_a_batch_loses_nothing(pbm_server: PbmServer) -> None:
    count = 150
    engine = pbm_server.engine()
    # All 150 come from alice's address: lift her reply budget (docs/security.md).
    with pbm_server.config_path.open("a", encoding="utf-8") as config:
        config.write("[limits]\nreplies_per_address_hour = 1000\n")
    # the whole batch waits in the inbox before pbm starts
    for n in range(count):
        pbm_server.stack.send("alice", "pbm@example.test", f"signup u{n:03d} secret")
    assert pbm_server.stack.wait_count("pbm", count, timeout=60) == count
    pbm_server.start()
    # kill -9 while the batch is being worked on: the first replies are queued, most are not
    deadline = time.monotonic() + 60
    for _ in range(6000):  # bound by count and by time, as every loop of a load test
        if outbox_count(pbm_server) >= 1 or time.monotonic() >= deadline:
            break
        time.sleep(0.01)
    assert pbm_server.stop(signal.SIGKILL) == -signal.SIGKILL
    done_before = outbox_count(pbm_server)
    assert done_before < count, "the batch was over before the kill; nothing was tested"
    pbm_server.start()
    assert wait_until(
        lambda: len([r for r in pbm_server.rows(InboundMessage) if r.status == "done"]) == count, 90
    ), pbm_server.log()
    assert wait_until(lambda: all(r.status == "sent" for r in pbm_server.rows(OutboxMail)), 30)
    with session_for(engine) as session:
        users = sorted(u.userid for u in session.exec(select(User)))
    assert users == [f"u{n:03d}" for n in range(count)]
    # every signup ran exactly once: one welcome each in the outbox
    subjects = [r.subject for r in pbm_server.rows(OutboxMail)]
    assert sorted(subjects) == [f"Welcome to the PBeM Server, u{n:03d}" for n in range(count)]
    # and every welcome reached alice; a mail sent just before the kill may come twice
    box = Postbox(pbm_server.stack, "alice")
    got = box.wait_for(lambda m: "Welcome" in str(m["Subject"]), n=count, timeout=30)
    assert {str(m["Subject"]) for m in got} == set(subjects)
    assert len(got) <= count + 1  # each mail is marked sent after its own transaction


def outbox_count(server: PbmServer) -> int:
    """Read-only, outside any transaction: a WAL reader never waits for pbm's writers."""
    path = server.data_dir / "pbm.sqlite3"
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        try:
            return int(db.execute("SELECT count(*) FROM outbox").fetchone()[0])
        except sqlite3.OperationalError:
            return 0  # the schema is not there yet


def test_dovecot_and_postfix_restarted_under_a_running_daemon(pbm_server: PbmServer) -> None:
    pbm_server.start()
    box = Postbox(pbm_server.stack, "bob")
    pbm_server.stack.script("restart-imap")
    pbm_server.stack.script("restart-smtp")
    pbm_server.stack.send("bob", "pbm@example.test", "signup bob secret")
    assert box.wait_for(lambda m: "Welcome" in str(m["Subject"]), timeout=40), pbm_server.log()
    # the outbox's reused relay connection and the IMAP session both came back
    pbm_server.stack.script("restart-smtp")
    pbm_server.stack.send("bob", "pbm@example.test", "help")
    assert len(box.wait_for(lambda m: True, n=2, timeout=40)) == 2, pbm_server.log()
    status = pbm_server.status()
    assert status["imap"]["connected"] and status["imap"]["reconnects"] >= 1


def test_bounces_and_auto_replies_are_never_answered(pbm_server: PbmServer) -> None:
    pbm_server.start()
    stack = pbm_server.stack
    # a player whose address does not exist: pbm's reply bounces back to its VERP address,
    # pbm+ID-CODE@example.test, in pbm's own inbox: counted, never answered
    stack.send("ghost@example.test", "pbm@example.test", "signup ghost secret")
    # an out-of-office answer to an earlier mail
    stack.send(
        "alice",
        "pbm@example.test",
        "Out of office: Re: Quarto Board 101",
        "I am away until Monday.",
        headers={"Auto-Submitted": "auto-replied"},
    )

    def settled() -> bool:
        rows = pbm_server.rows(InboundMessage)
        return len(rows) == 3 and all(r.status != "new" for r in rows)

    settled_in_time = wait_until(settled, 40)
    rows = pbm_server.rows(InboundMessage)
    assert settled_in_time, [(r.status, r.message_id) for r in rows]
    bounce = [r for r in rows if b"MAILER-DAEMON" in r.raw]
    assert len(bounce) == 1 and bounce[0].status == "done"
    [event] = pbm_server.rows(BounceEvent)
    assert (event.kind.value, event.mailbox) == ("hard", "ghost@example.test")
    assert [r.status for r in rows if b"Out of office" in r.raw] == ["ignored"]
    # only the welcome to ghost was ever queued: no answer to the bounce, no loop
    time.sleep(2)
    assert [r.subject for r in pbm_server.rows(OutboxMail)] == ["Welcome to the PBeM Server, ghost"]
    assert Postbox(stack, "alice").subjects() == []


def test_lmtp_and_smtp_listener_intake(pbm_server: PbmServer) -> None:
    import smtplib
    from email.message import EmailMessage

    pbm_server.start()
    stack = pbm_server.stack
    # Postfix delivers pbm-lmtp@example.test to pbm's LMTP listener
    stack.send("bob", "pbm-lmtp@example.test", "signup bob secret")
    assert Postbox(stack, "bob").wait_for(lambda m: "Welcome" in str(m["Subject"]))
    # a client submits straight to pbm's own SMTP listener (what `pbm mail send` does)
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "carol@example.test", "pbm@localhost", "signup carol x"
    msg["Message-ID"] = "<listener.1@example.test>"
    msg.set_content("")
    with smtplib.SMTP("127.0.0.1", pbm_server.smtp_port, timeout=10) as smtp:
        smtp.send_message(msg)
    assert Postbox(stack, "carol").wait_for(lambda m: "Welcome" in str(m["Subject"]))
    assert sorted(r.via for r in pbm_server.rows(InboundMessage)) == ["lmtp", "smtp"]
