"""A tournament board whose player to move is on vacation waits for him: the periodic job
tells his opponent so, once per vacation, and until when at most."""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import select

from pbm.jobs import run_due
from pbm.store.engine import session_for
from pbm.store.models import User
from pbm.store.models_correspondence import Vacation
from tests.server.conftest import Server, flat
from tests.server.test_tournaments import GAME, active_boards, create_and_enter, signup_all, to_move

HOUR = timedelta(hours=1)


def vacation_end(server: Server, userid: str) -> str:
    """When the running vacation of `userid` ends at the latest, as the notice writes it."""
    with session_for(server.engine) as session:
        user = session.exec(select(User).where(User.userid == userid)).one()
        row = session.exec(select(Vacation).where(Vacation.user_id == user.id)).one()
        assert row.started_at is not None
        return f"{row.started_at + timedelta(days=row.bank_days):%Y-%m-%d %H:%M} UTC"


def notices(server: Server) -> int:
    return run_due(server.engine, server.clock, server.config)["vacation_notices"]


def test_the_opponent_hears_once_that_the_board_waits_on_a_vacation(server: Server) -> None:
    """A player on vacation stops his clock, so his tournament board and its round stood
    still for days, and his opponent was told nothing of why."""
    people = signup_all(server, ["ann", "ben", "cat", "dan"])
    create_and_enter(server, people, "club", "type=swiss rounds=1")
    server.send(people["ann"], "tournament start club ann secret")
    server.new_mail()
    board, seats = active_boards(server, "club")[0]
    index = to_move(server, board)
    assert index is not None
    away, waiting = seats[index], seats[1 - index]
    # The opponent of the player to move goes away: nothing waits on him.
    assert server.send(people[waiting], f"vacation {waiting} secret start") == "done"
    server.new_mail()
    assert notices(server) == 0 and server.new_mail() == []
    server.send(people[waiting], f"vacation {waiting} secret stop")
    server.send(people[away], f"vacation {away} secret start")
    server.new_mail()
    server.clock.advance(HOUR)
    assert notices(server) == 1
    [told] = server.new_mail()
    assert told.to == [people[waiting]]
    assert told.subject == f"Tournament club board {board} waits"
    assert (
        f"{away} is on vacation until {vacation_end(server, away)} at the latest. Board "
        f"{board} of tournament club (round 1) waits for his move until he is back"
    ) in flat(told.body)
    # The job runs every few minutes: the opponent is told once, not each time.
    for _ in range(3):
        server.clock.advance(HOUR)
        assert notices(server) == 0
    assert server.new_mail() == []
    # A new vacation is news again.
    server.send(people[away], f"vacation {away} secret stop")
    server.clock.advance(HOUR)
    server.send(people[away], f"vacation {away} secret start")
    server.new_mail()
    assert notices(server) == 1
    assert [m.to for m in server.new_mail()] == [[people[waiting]]]


def test_a_board_of_no_tournament_gets_no_notice(server: Server) -> None:
    people = signup_all(server, ["ann", "ben"])
    server.send(people["ann"], f"{GAME} challenge ann ben")
    server.new_mail()
    for userid in ("ann", "ben"):  # whoever is to move, he is away
        server.send(people[userid], f"vacation {userid} secret start")
    server.new_mail()
    server.clock.advance(HOUR)
    assert notices(server) == 0 and server.new_mail() == []
