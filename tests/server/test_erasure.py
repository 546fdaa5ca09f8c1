"""Erasure that keeps the games (docs/privacy.md): a database with every kind of row for
one player; after `erase`, no row names him, every board replays to its result, and
no opponent's rating has moved."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

import pytest
from sqlmodel import Session, SQLModel, select

from pbm.jobs import run_due
from pbm.outgoing import queue_replies
from pbm.privacy_jobs import run_privacy
from pbm.services.accounts.erasure import KEPT_TABLES, erase_user
from pbm.services.accounts.my_data import personal_data
from pbm.services.accounts.users import find_user
from pbm.services.context import Context
from pbm.services.play.boards import replay_row, rules_for
from pbm.store.engine import session_for
from pbm.store.models import BoardRow, User
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
    server.send(alice, "quarto subscribe 101 alice secret")
    server.send(alice, "quarto show 101 alice wrong-password")
    server.send(bob, "quadrature challenge bob carol")
    _moves(server, "quadrature", "103", [(bob, "bob"), (carol, "carol")])
    server.send(carol, "quadrature resign 103 carol secret")
    server.clock.advance(timedelta(days=8))
    run_due(server.engine, server.clock, server.config)  # reminders, to alice too
    server.send(alice, "vacation alice secret start")
    assert server.send(alice, "tournament create alice secret spring quarto") == "done"
    server.config = replace(server.config, export_bytes_per_mail=17_000)
    server.send(alice, "export alice secret")  # in parts: the next one queued
    server.send(alice, "erase alice secret")
    token = re.findall(r"confirm (\w+)", server.new_mail()[-1].body)[-1]
    server.clock.advance(HOUR)
    assert server.send(alice, f"erase alice secret confirm {token}") == "done"
    server.new_mail()
    return people


def _texts(session: Session) -> list[tuple[str, str, str]]:
    """(table, column, text) of every text or bytes value in the database."""
    found = []
    for table in SQLModel.metadata.sorted_tables:
        for row in session.connection().execute(table.select()):
            for column, value in row._mapping.items():
                if isinstance(value, bytes):
                    value = value.decode("utf-8", "replace")
                if isinstance(value, str):
                    found.append((table.name, column, value.lower()))
    return found


@dataclass
class Before:
    boards: dict[int | None, tuple[Any, ...]]
    ratings: dict[tuple[int, str], tuple[Any, ...]]


def _before(server: Server, people: dict[str, str]) -> Before:
    """The boards and ratings before the erasure, after checking that every kind of
    row to erase is there: his text, his reminders, his pending erasure and export."""
    with session_for(server.engine) as session:
        assert any(SECRET_TEXT in t for _, _, t in _texts(session))
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        data = personal_data(ctx, find_user(ctx, "alice"))
        for table in (
            "job_marks",
            "erasure_requests",
            "export_parts",
            "rate_events",
            "tournaments",
        ):
            assert data["tables"][table], table
        assert data["log_lines"]
        return Before(
            {
                g.id: (g.status, g.result, g.winner, g.position)
                for g in session.exec(select(BoardRow))
            },
            {(r.user_id, r.game): (r.value, r.glicko) for r in session.exec(select(PlayerRating))},
        )


def _nothing_of_him(server: Server, people: dict[str, str], before: Before, uid: int) -> None:
    """No value names him, his address or his text, his copy of his data holds no row
    and no log line, every board replays to its result, nobody else's rating moved."""
    with session_for(server.engine) as session:
        texts = _texts(session)
        for needle in ("alice", people["alice"], SECRET_TEXT):
            assert [(t, c) for t, c, v in texts if needle in v] == []
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        erased = session.get(User, uid)
        assert erased is not None and erased.userid == f"erased-{uid}"
        data = personal_data(ctx, erased)
        assert data["log_lines"] == []
        kept = {"users", *KEPT_TABLES}
        assert {t: rows for t, rows in data["tables"].items() if rows and t not in kept} == {}
        games = list(session.exec(select(BoardRow)))
        for game in games:
            assert rules_for(game.game).dump(replay_row(ctx, game)) == game.position
            if before.boards[game.id][0] != "active":
                assert (game.status, game.result, game.winner, game.position) == before.boards[
                    game.id
                ]
            else:  # his running boards: resigned (or declined), unrated
                assert game.status in ("finished", "removed") and not game.rated
        after = {
            (r.user_id, r.game): (r.value, r.glicko)
            for r in session.exec(select(PlayerRating))
            if r.user_id != uid
        }
        assert after == {k: v for k, v in before.ratings.items() if k[0] != uid}


def _alice_id(server: Server) -> int:
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        return find_user(ctx, "alice").saved_id


def test_erase_keeps_the_games_and_nothing_of_him(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    people = _everything(server)
    before = _before(server, people)
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        alice = find_user(ctx, "alice")
        with caplog.at_level(logging.DEBUG):
            name = erase_user(ctx, alice)
            queue_replies(ctx, None, ctx.replies, inbound_id=None)
            session.commit()
    assert name == f"erased-{alice.id}"
    _nothing_of_him(server, people, before, alice.saved_id)
    assert "alice" not in caplog.text and people["alice"] not in caplog.text


def test_erase_by_mail_leaves_nothing_of_him_either(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    """The same through `erase` by mail and the privacy job, a week after the token came
    back, with an export part still queued for him."""
    people = _everything(server)
    uid = _alice_id(server)
    server.clock.advance(timedelta(days=7) - HOUR)  # the confirmation was an hour ago
    before = _before(server, people)
    server.clock.advance(HOUR)
    with caplog.at_level(logging.DEBUG):
        done = run_privacy(server.engine, server.clock, server.config)
    assert done["erasures"] == 1 and done["export_parts"] == 0
    _nothing_of_him(server, people, before, uid)
    assert "alice" not in caplog.text and people["alice"] not in caplog.text
