"""Bots as players on the server: a challenge by mail gets the bot's move back, a move
is never applied twice, engine failures fall back and are recorded, draws and
resignations follow the engine's verdict, and bots finish whole games."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
from sqlmodel import select

from pbm.games import GAMES, get_game
from pbm.jobs import apply_bot_answer, bot_task, due_bot_turns
from pbm.services.context import Context
from pbm.services.play import bots
from pbm.services.play.challenges import NewBoard, create_game
from pbm.store.engine import session_for
from pbm.store.models import BoardRow, Move, OutboxMail
from tests.bots.helpers import add_bot, play, show
from tests.server.conftest import Server, board_row, legal_texts

FAKE = f"{sys.executable} {Path(__file__).with_name('fake_engine.py')}"


def moves_of(server: Server, board: str = "101") -> list[Move]:
    row = board_row(server, "quarto", board)
    assert row is not None
    with session_for(server.engine) as session:
        query = select(Move).where(Move.game_id == row.id).order_by(Move.number)  # type: ignore[arg-type]
        return list(session.exec(query))


def test_a_challenge_by_mail_gets_the_bots_move_back(server: Server) -> None:
    alice = server.signup("alice")
    add_bot(server, "pbmbot", level=2)
    assert server.send(alice, "quarto challenge pbmbot alice") == "done"
    mails = server.new_mail()
    assert [m.to for m in mails] == [[alice]]  # nothing for the bot: it has no address
    assert "pbmbot (bot)" in mails[0].body
    assert play(server) == 1
    moves = moves_of(server)
    assert [(m.number, m.player) for m in moves] == [(1, 0)]
    assert moves[0].text.startswith("give ")
    mails = server.new_mail()
    assert [m.to for m in mails] == [[alice]]
    assert moves[0].text in mails[0].body
    # Now it is alice's turn: the bot has nothing to do.
    assert play(server) == 0
    alice_move = legal_texts(server, "quarto")[0]
    assert server.send(alice, f"quarto move 101 alice secret {alice_move}") == "done"
    assert play(server) == 1
    assert [m.player for m in moves_of(server)] == [0, 1, 0]
    with session_for(server.engine) as session:
        recipients = [row.recipients for row in session.exec(select(OutboxMail))]
    assert all("pbmbot" not in r for r in recipients)
    assert show(server, "pbmbot").moves == 2


def test_a_bot_move_is_never_applied_twice(server: Server) -> None:
    alice = server.signup("alice")
    add_bot(server, "pbmbot")
    assert server.send(alice, "quarto challenge alice pbmbot") == "done"
    server.send(alice, f"quarto move 101 alice secret {legal_texts(server, 'quarto')[0]}")
    config, clock = server.config, server.clock
    (turn,) = due_bot_turns(server.engine, clock, config)
    task = bot_task(server.engine, clock, config, turn, iterations=20)
    assert task is not None
    answer = bots.think(task)
    assert apply_bot_answer(server.engine, clock, config, answer) == "moved"
    count = len(moves_of(server))
    server.new_mail()
    # The same answer again (a crash after the commit, a second daemon): refused quietly.
    assert apply_bot_answer(server.engine, clock, config, answer) == "stale"
    assert len(moves_of(server)) == count
    assert server.new_mail() == []


def test_a_board_that_moved_while_the_bot_thought_refuses_its_move(server: Server) -> None:
    alice = server.signup("alice")
    add_bot(server, "pbmbot")
    assert server.send(alice, "quarto challenge pbmbot alice") == "done"
    config, clock = server.config, server.clock
    (turn,) = due_bot_turns(server.engine, clock, config)
    task = bot_task(server.engine, clock, config, turn, iterations=20)
    assert task is not None
    answer = bots.think(task)
    # Meanwhile alice resigns (the board is removed: nobody had moved yet).
    assert server.send(alice, "quarto resign 101 alice secret") == "done"
    server.new_mail()
    assert apply_bot_answer(server.engine, clock, config, answer) == "stale"
    assert moves_of(server) == []
    assert server.new_mail() == []


def test_challenges_beyond_the_bots_limits_are_refused_with_the_reason(server: Server) -> None:
    alice = server.signup("alice")
    add_bot(server, "quadbot", games=["quad"])
    add_bot(server, "busybot", max_games=1)
    assert server.send(alice, "quarto challenge alice quadbot") == "done"
    (mail,) = server.new_mail()
    assert "Invalid challenge" in mail.subject
    assert "quadbot is a computer player that does not play Quarto (it plays Quad)" in mail.body
    assert server.send(alice, "quarto challenge alice busybot") == "done"
    server.new_mail()
    assert server.send(alice, "quad challenge alice busybot") == "done"
    (mail,) = server.new_mail()
    assert "busybot is a computer player with 1 active boards" in mail.body
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        bots.set_disabled(ctx, "quadbot")
        session.commit()
    assert server.send(alice, "quad challenge alice quadbot") == "done"
    (mail,) = server.new_mail()
    assert "quadbot is a computer player that is not playing at present" in mail.body


def test_a_broken_engine_falls_back_and_the_failures_are_shown(server: Server) -> None:
    alice = server.signup("alice")
    add_bot(server, "brokenbot", engine=f"{FAKE} crash")
    assert server.send(alice, "quarto challenge brokenbot alice") == "done"
    assert play(server) == 1
    assert [m.player for m in moves_of(server)] == [0]
    info = show(server, "brokenbot")
    assert (info.failures, info.fallbacks) == (3, 1)
    assert info.last_failure is not None and info.last_failure.startswith("crash")


def test_an_engine_that_resigns_resigns_the_game(server: Server) -> None:
    alice = server.signup("alice")
    add_bot(server, "quitter", engine=f"{FAKE} resign")
    assert server.send(alice, "quarto challenge alice quitter") == "done"
    server.send(alice, f"quarto move 101 alice secret {legal_texts(server, 'quarto')[0]}")
    server.send(alice, f"quarto move 101 alice secret {legal_texts(server, 'quarto')[0]}")
    # quitter has not moved yet: its resignation declines the board, as a player's would.
    assert play(server) == 1
    row = board_row(server, "quarto")
    assert row is not None and row.status != "active"


def _propose(server: Server, alice: str) -> None:
    assert server.send(alice, "quarto move 101 alice secret propose") == "done"
    server.new_mail()


def test_a_bot_rejects_a_draw_in_an_open_position_on_either_turn(
    server: Server,
) -> None:
    alice = server.signup("alice")
    add_bot(server, "pbmbot", level=4)
    assert server.send(alice, "quarto challenge alice pbmbot") == "done"
    assert server.send(alice, "quarto move 101 alice secret give SDQF") == "done"
    _propose(server, alice)
    # Its turn: an open position, so it plays on (the move clears the proposal).
    assert play(server, limit=1) == 1
    row = board_row(server, "quarto")
    assert row is not None and row.status == "active" and row.proposal is None
    # alice's turn: a proposal now is answered from her side of the board.
    _propose(server, alice)
    assert play(server, limit=1) == 1
    row = board_row(server, "quarto")
    assert row is not None and row.status == "active" and row.proposal is None
    assert any("rejected" in m.body for m in server.new_mail())


def test_a_bot_rejects_undo_proposals(server: Server) -> None:
    alice = server.signup("alice")
    add_bot(server, "pbmbot")
    assert server.send(alice, "quarto challenge alice pbmbot") == "done"
    server.send(alice, "quarto move 101 alice secret give SDQF")
    play(server)
    assert server.send(alice, "quarto move 101 alice secret undo") == "done"
    assert play(server) == 1
    row = board_row(server, "quarto")
    assert row is not None and row.proposal is None and row.move_count == 2


@pytest.mark.parametrize("game", sorted(GAMES))
def test_two_bots_finish_a_whole_game(server: Server, game: str) -> None:
    server.config = dataclasses.replace(server.config, bot_seconds=0.05)
    add_bot(server, "one")
    add_bot(server, "two")
    rules = get_game(game)
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        create_game(ctx, NewBoard(rules, ["one", "two"]))
        session.commit()
    played = play(server)
    with session_for(server.engine) as session:
        (row,) = session.exec(select(BoardRow))
        moves = session.exec(select(Move).where(Move.game_id == row.id)).all()
    assert row.status == "finished", (row.status, row.move_count)
    assert played >= len(moves) > 0
    assert server.outbox() == []  # bots have no address: nothing was mailed
