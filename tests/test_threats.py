"""`GAME ask BOARD threats` (issue 26): for each game, a position built by hand whose
threats are known, answered as the mail says it (pbm.services.play.threats)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pbm.commands.ask import Ask
from pbm.games import GAMES, get_game
from pbm.games.quad import Quad
from pbm.games.quadrature import Quadrature
from pbm.games.quadrupel import Quadrupel
from pbm.services.play import threats
from pbm.services.play.boards import Board
from pbm.store.models import BoardRow, GamePlayer, User

# Black a1 k1 e2 c3 c5; White a11 b11 k11 a10 e5; Black to move.
QUADRATURE = (
    "OO........O/O........../.........../.........../.........../.........../"
    "..#.O....../.........../..#......../....#....../#.........# b 0 0 threefold"
)
# Black a1 b1 c1 d2 (d2-d1 makes a Straight); White a6 b6 c5 f3.
QUADRUPEL = "variant={variant} black={black} white={white} turn=black ply=6"
# Move phase, White to move: White a1 b1 c1 d2 (d2-d1 makes a four), Black f8 g8 h8 e7.
QUAD = "12 30/1000 o 0/0 5XXX/4X3/8/8/8/8/3O4/OOO5 -"
DOC = Path(__file__).resolve().parent.parent / "docs" / "accessibility.md"
NOW = datetime(2024, 1, 1, tzinfo=UTC)


def board_of(name: str, state: Any) -> Board:
    """A board with alice in the first seat and bob in the second, as the mail has it."""
    players = [
        (
            GamePlayer(game_id=1, user_id=n + 1, position=n),
            User(userid=userid, userid_key=userid, password_hash="x", created_at=NOW),
        )
        for n, userid in enumerate(("alice", "bob"))
    ]
    row = BoardRow(game=name, board="101", created_at=NOW, last_move_at=NOW)
    return Board(row, get_game(name), players, state)


def said(name: str, state: Any) -> str:
    return " ".join(" ".join(threats.answer(board_of(name, state))).split())


def test_quadrature_points_that_square_and_the_corners_the_enemy_must_avoid() -> None:
    game = get_game("quadrature")
    assert isinstance(game, Quadrature)
    state = game.load(QUADRATURE)
    squaring = game.squaring_points(state, 0)
    assert [(p.point, p.squared, p.steps_from) for p in squaring] == [
        ("c2", ("e5",), ()),
        ("e3", ("e5",), ("e2",)),
        ("k10", ("a10",), ()),  # with a1 and k1; but three White men square k10
    ]
    assert game.square_corners(state, 1) == ["b10", "k10"]
    assert game.square_corners(state, 0) == []
    text = said("quadrature", state)
    assert text.startswith(
        "alice (Black) would square White men from: e3 (squares e5; a step from e2); "
        "c2 (squares e5; no man one step away); k10 (squares a10; no man one step away)."
    ), text
    assert "alice (Black) has no square one man short." in text
    assert "bob (White) has squares one man short at: b10 k10; a Black man may not" in text
    # The answer is right: e2-e3 converts e5, and a step onto b10 would be refused.
    assert game.describe_move(state, game.parse_move(state, "e2-e3")) == "e2-e3 converts e5"


def test_quadrupel_shapes_one_move_short() -> None:
    game = get_game("quadrupel")
    assert isinstance(game, Quadrupel)
    state = game.load(QUADRUPEL.format(variant="basic", black="a1,b1,c1,d2", white="a6,b6,c5,f3"))
    assert [tuple(m) for m in game.shape_moves(state, 0)] == [("d2-d1", "Straight", None)]
    assert game.shape_moves(state, 1) == []
    text = said("quadrupel", state)
    assert "alice (Black) completes a QUADRUPEL with: d2-d1 (Straight)." in text
    assert "bob (White) has no move that completes a QUADRUPEL." in text
    after = game.apply(state, game.parse_move(state, "d2-d1"))
    assert after.result is not None and after.result.winner == 0


def test_quadrupel_points_are_said_once_the_setups_are_in() -> None:
    game = get_game("quadrupel")
    black = "a1:1,b1:2,c1:3,d2:4"
    state = game.load(QUADRUPEL.format(variant="points", black=black, white="a6:1,b6:2,c5:3,f3:4"))
    # Every stone on the edge (zone 1): 1 + 2 + 3 + 4 points.
    assert "d2-d1 (Straight, 10 points)" in said("quadrupel", state)


def test_quadrupel_threats_never_show_a_secret_setup() -> None:
    game = get_game("quadrupel")
    state = game.new_state(**game.resolve_options({"variant": "combination"}))
    state = game.apply(state, game.parse_move(state, "setup c4=1 d4=2 d5=3 c3=4"))
    text = said("quadrupel", state)
    assert text == (
        "bob (White): no board move before both players have set up. "
        "alice (Black): no board move before both players have set up."
    )


def test_quad_fours_in_reach_for_both_sides() -> None:
    game = get_game("quad")
    assert isinstance(game, Quad)
    state = game.load(QUAD)
    assert [game.format_move(state, m) for m in game.fours_in_reach(state, 0)] == ["d2-d1"]
    assert [game.format_move(state, m) for m in game.fours_in_reach(state, 1)] == ["e7-e8"]
    text = said("quad", state)
    assert text == "alice (White) makes a four with: d2-d1. bob (Black) makes a four with: e7-e8."


def test_quad_drops_that_make_a_four() -> None:
    game = get_game("quad")
    assert isinstance(game, Quad)
    state = game.new_state()
    for move in ("a1", "h8", "b1", "h7", "c1", "a8"):
        state = game.apply(state, game.parse_move(state, move))
    assert [game.format_move(state, m) for m in game.fours_in_reach(state, 0)] == ["d1"]
    assert "bob (Black) has no four in reach." in said("quad", state)


def test_quarod_has_no_lines() -> None:
    game = get_game("quarod")
    state = game.new_state()
    lines = threats.answer(board_of("quarod", state))
    assert lines[0] == "alice (Black) to move has no move that wins at once."
    assert lines[1].startswith("Quarod has no lines to complete")


@pytest.mark.parametrize("name", ["quadrature", "quadrupel", "quad", "quarod", "quarto"])
def test_a_finished_game_has_no_threats(name: str) -> None:
    game = get_game(name)
    state = game.new_state()
    moves = 0
    while game.outcome(state) is None and moves < 2000:
        state = game.apply(state, game.legal_moves(state)[0])
        moves += 1
    assert game.outcome(state) is not None
    assert said(name, state) == "The game is over: there are no moves to make."


def test_the_documented_examples_are_what_pbm_answers() -> None:
    doc = " ".join(DOC.read_text(encoding="utf-8").split())
    quadrupel = get_game("quadrupel").load(
        QUADRUPEL.format(variant="points", black="a1:1,b1:2,c1:3,d2:4", white="a6:1,b6:2,c5:3,f3:4")
    )
    for name, state in (
        ("quadrature", get_game("quadrature").load(QUADRATURE)),
        ("quadrupel", quadrupel),
        ("quad", get_game("quad").load(QUAD)),
    ):
        assert said(name, state) in doc, name


def test_help_ask_says_what_threats_are_in_every_game() -> None:
    for name in GAMES:
        assert re.search(rf"\bin {get_game(name).title}\b", Ask.summary), name
