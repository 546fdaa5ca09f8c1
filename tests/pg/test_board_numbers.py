"""Board numbers and tournament names under concurrent starts on three real `pbm serve`
processes sharing one PostgreSQL (issue 21, point 1): many challenges and tournament
creations and starts arrive at once, spread over the daemons; every one is answered
(none marked failed by a unique-key race), and each game's board numbers are distinct
and run 101, 102, ... without a gap.

Every loop is bounded by a count and by time; the counts are module constants."""

from __future__ import annotations

import email.parser
import threading
from collections import Counter
from pathlib import Path

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import col, select

from pbm.config import Config
from pbm.store.engine import make_engine, session_for
from pbm.store.models import BoardRow, InboundMessage, OutboxMail
from pbm.store.models_tournament import Tournament
from tests.pg.test_scale_out_daemons import (
    PASSWORD,
    Daemon,
    address,
    daemons_on,
    deliver,
    message,
    wait_for,
)

PLAYERS = 12
CHALLENGES = {"quarto": 24, "quad": 12}  # per game, in each of the two bursts
TOURNAMENTS = 4  # created at once, then started at once
ENTRANTS = 4  # per tournament: a round robin of 6 boards
DAEMONS = 3
SETTLE_SECONDS = 90.0


def burst(daemons: list[Daemon], mails: list[tuple[str, str]], tag: str) -> None:
    """Deliver every (userid, subject) at once: a thread per mail, each to the next
    daemon in turn, released together."""
    go = threading.Event()
    failures: list[BaseException] = []

    def send(i: int, userid: str, subject: str) -> None:
        go.wait(30)
        try:
            raw = message(address(userid), subject, f"<{tag}.{i}@players.example>")
            deliver(daemons, i % len(daemons), address(userid), raw)
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [
        threading.Thread(target=send, args=(i, userid, subject))
        for i, (userid, subject) in enumerate(mails)
    ]
    for thread in threads:
        thread.start()
    go.set()
    for thread in threads:
        thread.join(60)
        assert not thread.is_alive()
    assert failures == []


def settled(engine: Engine) -> bool:
    with session_for(engine) as session:
        waiting = session.exec(
            select(func.count()).where(col(InboundMessage.status).in_(("new",)))
        ).one()
    return int(waiting) == 0


def challenges(round_: int) -> list[tuple[str, str]]:
    mails = []
    for game, count in CHALLENGES.items():
        for i in range(count):
            a, b = f"p{(i + round_) % PLAYERS}", f"p{(i + round_ + 1) % PLAYERS}"
            mails.append((a, f"{game} challenge {a} {b}"))
    return mails


def test_concurrent_challenges_and_tournament_starts_on_three_daemons(
    config: Config, tmp_path: Path
) -> None:
    url = config.database_url
    engine = make_engine(url)
    try:
        with daemons_on(url, tmp_path, DAEMONS) as daemons:
            for n in range(PLAYERS):
                raw = message(address(f"p{n}"), f"signup p{n} {PASSWORD}", f"<s{n}@p.example>")
                deliver(daemons, n, address(f"p{n}"), raw)
            assert wait_for(lambda: settled(engine), SETTLE_SECONDS, 0.1)
            # Confirmed as a player confirms: a reply to his welcome, to its Reply-To.
            for n in range(PLAYERS):
                to = welcome_reply_to(engine, address(f"p{n}"))
                raw = message(address(f"p{n}"), "Re: welcome", f"<c{n}@p.example>", to)
                deliver(daemons, n, address(f"p{n}"), raw)
            assert wait_for(lambda: settled(engine), SETTLE_SECONDS, 0.1)
            creations = [
                ("p0", f"tournament create p0 {PASSWORD} t{k} quarto") for k in range(TOURNAMENTS)
            ]
            burst(daemons, creations + challenges(0), "first")
            assert wait_for(lambda: settled(engine), SETTLE_SECONDS, 0.1)
            for k in range(TOURNAMENTS):
                for e in range(ENTRANTS):
                    who = f"p{(k + e) % PLAYERS}"
                    subject = f"tournament join t{k} {who} {PASSWORD}"
                    raw = message(address(who), subject, f"<j{k}.{e}@p.example>")
                    deliver(daemons, k + e, address(who), raw)
            assert wait_for(lambda: settled(engine), SETTLE_SECONDS, 0.1)
            starts = [("p0", f"tournament start t{k} p0 {PASSWORD}") for k in range(TOURNAMENTS)]
            burst(daemons, starts + challenges(1), "second")
            assert wait_for(lambda: settled(engine), SETTLE_SECONDS, 0.1)
        check(engine)
    finally:
        engine.dispose()


def welcome_reply_to(engine: Engine, to: str) -> str:
    """The Reply-To of the welcome (the confirmation request) mailed to `to`."""
    with session_for(engine) as session:
        rows = session.exec(select(OutboxMail).order_by(col(OutboxMail.id))).all()
    welcome = next(r for r in rows if to in r.recipients)
    return str(email.parser.BytesParser().parsebytes(welcome.raw)["Reply-To"])


def check(engine: Engine) -> None:
    with session_for(engine) as session:
        inbound = list(session.exec(select(InboundMessage)))
        answered = {m.inbound_id for m in session.exec(select(OutboxMail))}
        games = list(session.exec(select(BoardRow)))
        prefixes = [t.prefix for t in session.exec(select(Tournament))]
    statuses = Counter(m.status for m in inbound)
    assert statuses == {"done": len(inbound)}, [
        (m.message_id, m.status, (m.error or "")[:200]) for m in inbound if m.status != "done"
    ]
    assert all(m.id in answered for m in inbound)
    for game, count in CHALLENGES.items():
        numbers = sorted(g.board_number or 0 for g in games if g.game == game and g.board_number)
        assert numbers == list(range(101, 101 + 2 * count)), (game, numbers)
    assert len(prefixes) == len(set(prefixes)) == TOURNAMENTS
    boards = Counter(g.board.rstrip("0123456789") for g in games if not g.board_number)
    assert boards == {p: ENTRANTS * (ENTRANTS - 1) // 2 for p in prefixes}, boards
