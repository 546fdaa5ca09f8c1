"""One mail of every kind pbm sends, made through the real pipeline and finished by the
real sender's step (the HTML part added), for the DKIM proof and the spam score table.

KINDS maps a kind's name to a scenario: it plays on a fresh server (by mail, by the
periodic jobs, by a bot) until that kind of mail is queued, and returns it. A new kind
of mail is one more entry here; tests/deliverability/test_dkim_verified.py and
benchmarks/spam_scores.py both read this table.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from pbm import jobs
from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.mailstore import DbOutbox
from pbm.services.context import Context
from pbm.services.play import bots
from pbm.store.engine import make_engine, session_for
from pbm.store.schema import init_db
from tests.server.conftest import SERVER, START, Sent, Server, legal_texts

DAY = timedelta(days=1)
GAME = "quarto"


@contextmanager
def fresh_server(directory: Path) -> Iterator[Server]:
    """A server on SQLite in `directory`, as the tests' `server` fixture makes it."""
    config = Config(
        data_dir=directory,
        database_url=f"sqlite:///{directory / 'pbm.sqlite3'}",
        server_address=SERVER,
        server_name="PBeM Server",
        password_cost=4,
    )
    engine = make_engine(config.database_url)
    init_db(engine)
    server = Server(engine=engine, config=config, clock=FrozenClock(START))
    try:
        yield server
    finally:
        server.engine.dispose()


def finished(server: Server, mail: Sent) -> bytes:
    """`mail` as the sender hands it to the transport: claimed, HTML part added."""
    outbox = DbOutbox(server.engine, server.clock)
    due = asyncio.run(outbox.due(1000))
    [ready] = [m for m in due if m.id == mail.id]
    return ready.raw


def only(mails: list[Sent], subject_start: str) -> Sent:
    """The first of `mails` whose subject starts so (the scenario's mail of its kind)."""
    found = [m for m in mails if m.subject.startswith(subject_start)]
    assert found, f"no mail {subject_start!r} among {[m.subject for m in mails]}"
    return found[0]


def board(server: Server) -> tuple[str, str]:
    """alice and bob signed up, board 101 started (alice to move)."""
    alice = server.signup("alice")
    bob = server.signup("bob")
    assert server.send(alice, f"{GAME} challenge alice bob", "Good luck!") == "done"
    return alice, bob


def move(server: Server, sender: str, userid: str) -> None:
    text = legal_texts(server, GAME)[0]
    assert server.send(sender, f"{GAME} move 101 {userid} secret {text}", "Your turn.") == "done"


def welcome(server: Server) -> Sent:
    assert server.send("alice@players.example", "signup alice secret") == "done"
    return only(server.new_mail(), "")


def new_board(server: Server) -> Sent:
    board(server)
    return only(server.new_mail(), "New Quarto Board")


def a_move(server: Server) -> Sent:
    alice, _ = board(server)
    server.new_mail()
    move(server, alice, "alice")
    return only(server.new_mail(), "Quarto Board 101")


def error(server: Server) -> Sent:
    alice = server.signup("alice")
    server.send(alice, f"{GAME} move 101 alice secret z9")
    return only(server.new_mail(), "")


def help_mail(server: Server) -> Sent:
    alice = server.signup("alice")
    server.send(alice, "help")
    return only(server.new_mail(), "")


def show(server: Server) -> Sent:
    alice, _ = board(server)
    server.new_mail()
    server.send(alice, f"{GAME} show 101")
    return only(server.new_mail(), "")


def history(server: Server) -> Sent:
    alice, _ = board(server)
    server.new_mail()
    server.send(alice, f"{GAME} history")
    return only(server.new_mail(), "")


def digest(server: Server) -> Sent:
    alice, bob = board(server)
    server.send(bob, "digest bob secret on")
    server.new_mail()
    move(server, alice, "alice")
    server.new_mail()
    run_jobs(server)
    return only(server.new_mail(), "Your move summary")


def idle(server: Server, days: int) -> list[Sent]:
    """The mails the periodic jobs send when bob has not answered alice's move for `days`
    (each has moved once: before, time running out declines the board)."""
    alice, bob = board(server)
    move(server, alice, "alice")
    move(server, bob, "bob")
    move(server, alice, "alice")
    server.new_mail()
    server.clock.advance(days * DAY)
    run_jobs(server)
    return server.new_mail()


def run_jobs(server: Server) -> None:
    jobs.run_due(server.engine, server.clock, server.config)


def nag(server: Server) -> Sent:
    return only(idle(server, 7), "Nag:")


def reminder(server: Server) -> Sent:
    """A tournament board's reminder: after one day, not pbmserv's seven."""
    people = tournament_started(server)
    server.new_mail()
    server.clock.advance(DAY + timedelta(hours=1))
    run_jobs(server)
    mails = server.new_mail()
    assert all(m.to[0] in people.values() for m in mails)
    return only(mails, "Nag:")


def forfeit(server: Server) -> Sent:
    mails = idle(server, 21)
    assert all("bob forfeits" in m.body for m in mails)
    return only(mails, "Quarto Board 101")


def tournament_started(server: Server) -> dict[str, str]:
    people = {n: server.signup(n) for n in ("ann", "ben")}
    server.send(people["ann"], f"tournament create ann secret club {GAME}")
    server.send(people["ben"], "tournament join club ben secret")
    server.send(people["ann"], "tournament join club ann secret")
    server.send(people["ann"], "tournament start club ann secret")
    return people


def pairing(server: Server) -> Sent:
    tournament_started(server)
    return only(server.new_mail(), "Tournament club round")


def result(server: Server) -> Sent:
    people = tournament_started(server)
    server.new_mail()
    for userid, address in people.items():
        server.send(address, f"{GAME} resign a101 {userid} secret")
    return only(server.new_mail(), "Tournament club won by")


def waiting(server: Server) -> Sent:
    """A tournament board's player to move is on vacation: his opponent is told."""
    people = tournament_started(server)
    for userid, address in people.items():  # whoever is to move, he is away
        server.send(address, f"vacation {userid} secret start")
    server.new_mail()
    run_jobs(server)
    [told] = [m for m in server.new_mail() if m.subject.endswith(" is on vacation")]
    return told


def confirmation(server: Server) -> Sent:
    """The request that goes to a second address named at signup (the welcome is the
    sender's own request)."""
    assert server.send("alice@players.example", "signup alice secret alice@home.example") == "done"
    return only([m for m in server.new_mail() if "alice@home.example" in m.to], "")


def message(server: Server) -> Sent:
    # A message goes only to players who share a board with the sender (issue 22).
    alice, _ = board(server)
    server.new_mail()
    server.send(alice, "message alice secret bob", "Shall we play Quarto tonight?")
    return only(server.new_mail(), "Message from alice")


def chat(server: Server) -> Sent:
    alice, _ = board(server)
    server.new_mail()
    server.send(alice, f"{GAME} chat 101 alice secret", "Nice weather for a game.")
    return only(server.new_mail(), "Quarto chat 101")


def bot_move(server: Server) -> Sent:
    alice = server.signup("alice")
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        bots.add_bot(ctx, "pbmbot", games=(), level=1, engine="builtin", max_games=None)
        session.commit()
    assert server.send(alice, f"{GAME} challenge pbmbot alice") == "done"
    server.new_mail()
    assert jobs.play_bots(server.engine, server.clock, server.config, iterations=40) == 1
    return only(server.new_mail(), "Quarto Board 101")


# Every kind of mail pbm sends.
KINDS: dict[str, Callable[[Server], Sent]] = {
    "welcome": welcome,
    "confirmation": confirmation,
    "new board": new_board,
    "move": a_move,
    "error": error,
    "help": help_mail,
    "show": show,
    "history": history,
    "digest": digest,
    "reminder": reminder,
    "nag": nag,
    "forfeit": forfeit,
    "tournament pairing": pairing,
    "tournament result": result,
    "tournament waiting": waiting,
    "message": message,
    "chat": chat,
    "bot move": bot_move,
}


def make_mail(kind: str, directory: Path) -> bytes:
    """One finished mail of `kind`, made on a fresh server in `directory`."""
    with fresh_server(directory) as server:
        return finished(server, KINDS[kind](server))
