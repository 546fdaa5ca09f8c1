"""Whole games of every registered game through process_message: two players and a
subscriber, asserting the mails each one receives after every move."""

from __future__ import annotations

import random

import pytest

from pbm.games import GAMES
from tests.server.conftest import Server, board_row, legal_texts, seat_to_move

MAX_PLIES = 80


@pytest.mark.parametrize("name", sorted(GAMES))
def test_full_game(server: Server, name: str) -> None:
    rules = GAMES[name]
    people = {u: server.signup(u) for u in ("alice", "bob", "carol")}
    server.send(people["carol"], f"{name} subscribe carol secret all")
    server.new_mail()
    server.send(people["alice"], f"{name} challenge alice bob", "Have fun.")
    new = server.new_mail()
    assert sorted(m.to[0] for m in new) == sorted(people.values())
    assert all(m.subject == f"New {rules.title} Board 101 alice **" for m in new)
    last = {m.to[0]: m for m in new}
    rng = random.Random(name)
    userids = ["alice", "bob"]
    for ply in range(1, MAX_PLIES + 1):
        row = board_row(server, name)
        if row.status != "active":
            break
        mover = userids[seat_to_move(row)]
        move = rng.choice(legal_texts(server, name))
        if ply % 3 == 0:  # every third move as a bare reply carrying the token
            mail = last[people[mover]].mail
            status = server.send(people[mover], "Re: " + mail.subject, move, to=mail.reply_to)
        else:
            status = server.send(people[mover], f"{name} move 101 {mover} secret {move}#{ply}")
        assert status == "done"
        mails = server.new_mail()
        assert sorted(m.to[0] for m in mails) == sorted(people.values()), (ply, move, mails)
        last.update({m.to[0]: m for m in mails})
        row = board_row(server, name)
        assert row.move_count == ply
        for m in mails:
            assert m.subject.startswith(f"{rules.title} Board 101")
            assert f"{ply} " in m.body
            if row.status == "active":
                assert f"It is {userids[seat_to_move(row)]}'s turn." in m.body
                assert m.subject.split()[3] == userids[seat_to_move(row)]
    row = board_row(server, name)
    if row.status == "active":
        loser = userids[seat_to_move(row)]
        server.send(people[loser], f"{name} resign 101 {loser} secret")
        last.update({m.to[0]: m for m in server.new_mail()})
    row = board_row(server, name)
    assert row.status == "finished"
    final = list(last.values())
    assert sorted(m.to[0] for m in final) == sorted(people.values())
    for m in final:
        assert ("Game won by" in m.body) or ("Game was a tie." in m.body)
        assert "Game ended......" in m.body
    # The finished board's cache still equals a replay; the CLI check agrees.
    from pbm.services.context import Context
    from pbm.services.play.boards import board_from_row
    from pbm.services.play.moves import replay_check
    from pbm.store import queries
    from pbm.store.engine import session_for

    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        board = board_from_row(ctx, row)
        texts = [mv.text for mv in queries.moves_of(session, board.id)]
        assert replay_check(board, texts)
