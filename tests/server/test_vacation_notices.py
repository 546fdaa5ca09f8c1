"""A player on vacation stops his clocks, so his boards stood still for days and his
opponents were told nothing of why: the periodic job tells each opponent, in one mail,
which boards wait for the player and until when at most, once per board and vacation."""

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


def test_a_tournament_opponent_hears_once_that_the_board_waits(server: Server) -> None:
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
    assert told.to == [people[waiting]] and told.subject == f"{away} is on vacation"
    assert flat(told.body) == flat(
        f"{away} is on vacation until {vacation_end(server, away)} at the latest. This board"
        " waits for his move until he is back, his clock stopped meanwhile:\n\n"
        f"    Quarto Board {board} (tournament club, round 1, which waits for it)\n\n"
        "You need do nothing: the board mail tells you when he has moved.\n"
    )
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


def test_one_mail_per_opponent_for_all_his_boards_that_wait(server: Server) -> None:
    """Boards outside tournaments wait too; an opponent waiting on two boards gets one mail
    naming both, and a board where the player away is not to move is not named."""
    people = signup_all(server, ["ann", "ben", "cat"])
    for challenge in ("ann ben", "ann ben", "ann cat", "ben ann"):
        server.send(people[challenge.split()[0]], f"{GAME} challenge {challenge}")
    server.new_mail()
    server.send(people["ann"], "vacation ann secret start")
    server.new_mail()
    server.clock.advance(HOUR)
    assert notices(server) == 2
    told = {m.to[0]: m.body for m in server.new_mail()}
    assert set(told) == {people["ben"], people["cat"]}
    assert "These boards wait for his move" in flat(told[people["ben"]])
    assert "    Quarto Board 101\n    Quarto Board 102\n\n" in told[people["ben"]]
    assert "board 104" not in told[people["ben"]]  # ben's own move there
    assert "This board waits" in flat(told[people["cat"]])
    assert "    Quarto Board 103\n\n" in told[people["cat"]]
    server.clock.advance(HOUR)
    assert notices(server) == 0
    # More days granted to this vacation (`pbm vacation ann grant 5`) move its end: told
    # again, with the new date.
    with session_for(server.engine) as session:
        user = session.exec(select(User).where(User.userid == "ann")).one()
        row = session.exec(select(Vacation).where(Vacation.user_id == user.id)).one()
        row.bank_days += 5
        session.add(row)
        session.commit()
    assert notices(server) == 2
    again = server.new_mail()
    assert {m.to[0] for m in again} == {people["ben"], people["cat"]}
    assert all(vacation_end(server, "ann") in flat(m.body) for m in again)
