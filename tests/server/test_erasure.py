"""Erasure that keeps the games (docs/privacy.md): a database with every kind of row for
one player; after `erase`, no row names him, every board replays to its result, and
no opponent's rating has moved."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlmodel import SQLModel

from pbm.outgoing import queue_replies
from pbm.services.accounts import find_user
from pbm.services.boards import replay_row, rules_for
from pbm.services.context import Context
from pbm.services.erasure import erase_user
from pbm.store.engine import session_for
from pbm.store.models import Game
from pbm.store.models_correspondence import PlayerRating
from tests.server.conftest import Server, legal_texts

HOUR = timedelta(hours=1)
SECRET_TEXT = "xyzzy-plover"


def _moves(server: Server, game: str, board: str, players: list[tuple[str, str]]) -> None:
    for sender, userid in players:
        server.clock.advance(HOUR)
        text = legal_texts(server, game, board)[0]
        assert server.send(sender, f"{game} move {board} {userid} secret {text}") == "done"


def _everything(server: Server) -> dict[str, str]:
    people = {u: server.signup(u) for u in ("alice", "bob", "carol")}
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    server.send(alice, "quadrature challenge alice bob")
    _moves(server, "quadrature", "101", [(alice, "alice"), (bob, "bob")])
    server.send(bob, "quadrature resign 101 bob secret")  # rated: alice won
    server.send(carol, "quarto challenge carol alice")
    _moves(server, "quarto", "101", [(carol, "carol"), (alice, "alice")])
    server.send(alice, "quarto chat 101 alice secret", f"my {SECRET_TEXT} plan")
    server.send(alice, "quadrature challenge alice carol")
    server.send(alice, "set alice secret format text")
    server.send(alice, "vacation alice secret start")
    server.send(alice, "quarto subscribe 101 alice secret")
    server.send(alice, "quarto show 101 alice wrong-password")
    server.send(bob, "quadrature challenge bob carol")
    _moves(server, "quadrature", "103", [(bob, "bob"), (carol, "carol")])
    server.send(carol, "quadrature resign 103 carol secret")
    server.new_mail()
    return people


def _texts(session: Any) -> list[tuple[str, str, str]]:
    """(table, column, text) of every text or bytes value in the database."""
    found = []
    for table in SQLModel.metadata.sorted_tables:
        for row in session.connection().execute(select(table)):
            for column, value in row._mapping.items():
                if isinstance(value, bytes):
                    value = value.decode("utf-8", "replace")
                if isinstance(value, str):
                    found.append((table.name, column, value.lower()))
    return found


def test_erase_keeps_the_games_and_nothing_of_him(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    people = _everything(server)
    with session_for(server.engine) as session:
        before = {
            g.id: (g.status, g.result, g.winner, g.position)
            for g in session.exec(select(Game)).scalars()
        }
        ratings = {
            (r.user_id, r.game): (r.value, r.glicko)
            for r in session.exec(select(PlayerRating)).scalars()
        }
        assert any(SECRET_TEXT in t for _, _, t in _texts(session))
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        alice = find_user(ctx, "alice")
        with caplog.at_level(logging.DEBUG):
            name = erase_user(ctx, alice)
            queue_replies(ctx, None, ctx.replies, inbound_id=None)
            session.commit()
    assert name == f"erased-{alice.id}"
    with session_for(server.engine) as session:
        texts = _texts(session)
        for needle in ("alice", people["alice"], SECRET_TEXT):
            assert [(t, c) for t, c, v in texts if needle in v] == []
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        games = list(session.exec(select(Game)).scalars())
        for game in games:
            assert rules_for(game.game).dump(replay_row(ctx, game)) == game.position
            if before[game.id][0] != "active":
                assert (game.status, game.result, game.winner, game.position) == before[game.id]
            else:  # his running boards: resigned (or declined), unrated
                assert game.status in ("finished", "removed") and not game.rated
        after = {
            (r.user_id, r.game): (r.value, r.glicko)
            for r in session.exec(select(PlayerRating)).scalars()
            if r.user_id != alice.id
        }
        assert after == {k: v for k, v in ratings.items() if k[0] != alice.id}
    assert "alice" not in caplog.text and people["alice"] not in caplog.text
