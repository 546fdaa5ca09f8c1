"""Conditional moves with bots (issue 15): a bot's move triggers the opponent's
conditional answer at once, in the same transaction, as a human's move does."""

from __future__ import annotations

from sqlmodel import col, select

from pbm.games import get_game
from pbm.jobs import apply_bot_answer, bot_task, due_bot_turns
from pbm.services.play import bots
from pbm.store import queries
from pbm.store.engine import session_for
from pbm.store.models import Move
from tests.bots.helpers import add_bot
from tests.server.conftest import Server, board_row, legal_texts


def test_a_bots_move_fires_the_conditional_answer_at_once(server: Server) -> None:
    alice = server.signup("alice")
    add_bot(server, "pbmbot")
    assert server.send(alice, "quarto challenge alice pbmbot") == "done"
    first = legal_texts(server, "quarto")[0]
    assert server.send(alice, f"quarto move 101 alice secret {first}") == "done"
    server.new_mail()
    # What the bot will play, thought as the daemon thinks it (not applied yet).
    config, clock = server.config, server.clock
    (turn,) = due_bot_turns(server.engine, clock, config)
    task = bot_task(server.engine, clock, config, turn, iterations=20)
    assert task is not None
    answer = bots.think(task)
    rules = get_game("quarto")
    with session_for(server.engine) as session:
        row = queries.game_by_board(session, "quarto", "101")
        assert row is not None
        after = rules.apply(
            rules.load(row.position), rules.parse_move(rules.load(row.position), answer.text)
        )
    mine = rules.format_move(after, rules.legal_moves(after)[0])
    # Quarto's moves hold a space: the moves of a line are separated by ";".
    assert (
        server.send(alice, "quarto conditional 101 alice secret", f"{answer.text}; {mine}")
        == "done"
    )
    server.new_mail()
    assert apply_bot_answer(server.engine, clock, config, answer) == "moved"
    game = board_row(server, "quarto", "101")
    assert game is not None
    with session_for(server.engine) as session:
        query = select(Move).where(Move.game_id == game.id).order_by(col(Move.number))
        played = [(m.player, m.text) for m in session.exec(query)]
    assert played == [(0, first), (1, answer.text), (0, mine)]
    # Alice's copy says her conditional answer was played; the bot's move needed no mail
    # of hers, and it is the bot's turn again.
    (to_alice,) = [m for m in server.new_mail() if m.to == [alice]]
    assert "conditional" in to_alice.body.lower()
    assert [t.game_id for t in due_bot_turns(server.engine, clock, config)] == [game.id]
