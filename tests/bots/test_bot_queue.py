"""One player cannot hold the bots' queue: due bot turns are served round robin over the
human players waiting, and a player has at most `[bots] max_games_per_player` active
boards against bots (a challenge past it is refused with the reason)."""

from __future__ import annotations

import dataclasses

import pytest

from pbm.games import get_game
from pbm.jobs import due_bot_turns
from pbm.services.context import Context
from pbm.services.play.bots import BotQueue
from pbm.services.play.challenges import ChallengeError, NewBoard, create_game
from pbm.store.bot_queries import BotTurn
from pbm.store.engine import session_for
from tests.bots.helpers import add_bot, play
from tests.server.conftest import Server, board_row, find_board


def _turn(board: int, waiting: int | None) -> BotTurn:
    return BotTurn(board, 99, 1, 0, "move", waiting)


def test_the_queue_serves_the_players_waiting_in_turn() -> None:
    queue = BotQueue()
    alice = [_turn(board, 1) for board in range(1, 6)]  # alice's five, oldest first
    bob, carol = _turn(6, 2), [_turn(7, 3), _turn(8, 3)]
    bots_only = _turn(9, None)
    turns = [*alice, bob, *carol, bots_only]
    order = queue.order(turns)
    assert [t.game_id for t in order] == [1, 6, 7, 9, 2, 8, 3, 4, 5]
    # alice served: she goes behind everybody who waits, whatever her turns' age.
    queue.served(order[0])
    left = [t for t in turns if t is not order[0]]
    assert [t.game_id for t in queue.order(left)][:4] == [6, 7, 9, 2]
    for turn in (bob, carol[0], bots_only):
        queue.served(turn)
    left = [alice[1], carol[1], _turn(10, None), _turn(11, 2)]
    # Served alice, bob, carol, the bots' boards: served again in that order.
    assert [t.game_id for t in queue.order(left)] == [2, 11, 8, 10]
    assert queue.order([]) == []


def test_a_player_with_many_bot_boards_does_not_hold_the_others_up(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    add_bot(server, "pbmbot")
    lines = "\n".join(["quarto challenge pbmbot alice"] * 5)
    assert server.send(alice, "multiple", lines) == "done"
    assert server.send(bob, "quarto challenge pbmbot bob") == "done"  # board 106
    server.new_mail()
    due = due_bot_turns(server.engine, server.clock, server.config)
    assert len(due) == 6 and due[-1].waiting != due[0].waiting
    # One move for alice's oldest board, then bob's: not after all of alice's.
    assert play(server, limit=2) == 2
    bobs = board_row(server, "quarto", "106")
    assert bobs is not None and bobs.move_count == 1
    moved = [board_row(server, "quarto", str(board)) for board in range(101, 106)]
    assert [row.move_count for row in moved if row is not None] == [1, 0, 0, 0, 0]


def test_challenges_past_a_players_limit_of_bot_boards_are_refused(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    add_bot(server, "pbmbot")
    add_bot(server, "otherbot")
    lines = "\n".join(["quarto challenge alice pbmbot"] * 4 + ["quad challenge otherbot alice"])
    lines += "\nquarto challenge alice otherbot"
    assert server.send(alice, "multiple", lines) == "done"
    mails = server.new_mail()
    assert len([m for m in mails if m.subject.startswith("New ")]) == 5
    (refusal,) = [m for m in mails if m.subject == "Invalid challenge"]
    assert "alice has 5 active boards against computer players, the most a" in refusal.body
    assert "(Your command: quarto challenge alice otherbot)" in refusal.body
    assert find_board(server, "quarto", "105") is None
    # Other players, and boards between players, are not limited by alice's.
    assert server.send(bob, "quarto challenge bob pbmbot") == "done"
    assert server.send(alice, "quarto challenge alice bob") == "done"
    assert find_board(server, "quarto", "105") is not None
    assert find_board(server, "quarto", "106") is not None
    # When one of alice's bot boards ends, she may challenge a bot again.
    assert server.send(alice, "quarto resign 101 alice secret") == "done"
    server.new_mail()
    assert server.send(alice, "quarto challenge alice pbmbot") == "done"
    assert find_board(server, "quarto", "107") is not None


def test_a_tournaments_pairings_are_not_refused_by_the_limit(server: Server) -> None:
    server.config = dataclasses.replace(server.config, bot_games_per_player=1)
    alice = server.signup("alice")
    add_bot(server, "pbmbot")
    assert server.send(alice, "quarto challenge alice pbmbot") == "done"
    server.new_mail()
    quarto = get_game("quarto")
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        with pytest.raises(ChallengeError, match="alice has 1 active boards against"):
            create_game(ctx, NewBoard(quarto, ["alice", "pbmbot"]))
        assert create_game(ctx, NewBoard(quarto, ["pbmbot", "alice"], entered=True)).active
        session.commit()
