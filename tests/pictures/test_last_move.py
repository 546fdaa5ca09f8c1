"""Which squares the last move marks: the squares its notation names (Mark.MOVE) and
every other square it changed (Mark.EFFECT), read from positions the engines reach."""

from __future__ import annotations

import random
from typing import Any

from pbm.games import GAMES, AnyGame
from pbm.pictures.board import Mark
from pbm.pictures.lastmove import last_move
from pbm.pictures.picture import VIEWS
from pbm.services.play.picture_words import picture_words

# The words of the pictures as the templates hold them.
WORDS = picture_words()


def marks_of(game: AnyGame, before: Any, after: Any, seat: int | None) -> tuple[dict, str | None]:
    view = VIEWS[game.name]
    seen = view(game, before, seat, game.seats, WORDS), view(game, after, seat, game.seats, WORDS)
    return last_move(game, before, after, seat, *seen)


def first_move(game: AnyGame, options: dict[str, Any], word: str) -> tuple[Any, Any, Any]:
    """The first move of seeded random games whose echo contains `word`."""
    for seed in range(200):
        rng = random.Random(seed)
        state = game.new_state(**options)
        while game.to_move(state) is not None:
            move = rng.choice(game.legal_moves(state))
            if word in game.describe_move(state, move):
                return state, move, game.apply(state, move)
            state = game.apply(state, move)
    raise AssertionError(f"no {word!r} in 200 games of {game.name}")


def test_quadrature_from_to_and_converted_men() -> None:
    game = GAMES["quadrature"]
    before, move, after = first_move(game, {}, "converts")
    marks, echo = marks_of(game, before, after, None)
    text = game.format_move(before, move)
    origin, target = text.split("-")
    converted = game.describe_move(before, move).split(" converts ")[1].split(" removes ")[0]
    expected = {origin: Mark.MOVE, target: Mark.MOVE}
    expected |= {square: Mark.EFFECT for square in converted.split()}
    assert marks == expected
    assert echo == f"{game.seat_name(before.turn)} {game.describe_move(before, move)}"


def test_quad_drop_step_and_capture() -> None:
    game = GAMES["quad"]
    state = game.new_state()
    after = game.apply(state, game.parse_move(state, "d4"))
    assert marks_of(game, state, after, 0) == ({"d4": Mark.MOVE}, "White d4")
    before, move, after = first_move(game, {}, " x ")
    marks, echo = marks_of(game, before, after, None)
    step, captured = game.describe_move(before, move).split(" x ")
    expected = {square: Mark.MOVE for square in step.split("-")}
    expected |= {square: Mark.EFFECT for square in captured.split()}
    assert marks == expected
    assert echo is not None and echo.endswith(f" x {captured}")


def test_quarto_give_and_placement() -> None:
    game = GAMES["quarto"]
    state = game.new_state()
    gave = game.apply(state, game.parse_move(state, "give TLRH"))
    assert marks_of(game, state, gave, 1) == ({}, "First give TLRH")
    placed = game.apply(gave, game.parse_move(gave, "b2 SDQF"))
    marks, echo = marks_of(game, gave, placed, 0)
    assert marks == {"b2": Mark.MOVE}
    assert echo == "Second b2 SDQF: places TLRH on b2, gives SDQF"


def test_quarod_swap_releases_the_old_partners() -> None:
    game = GAMES["quarod"]
    before, move, after = first_move(game, {"size": 6}, "no longer engaged")
    marks, _ = marks_of(game, before, after, 0)
    swapped = game.format_move(before, move).split("<>")
    released = game.describe_move(before, move).split("(")[1].split(" no longer")[0].split(" and ")
    assert marks == {
        **{square: Mark.MOVE for square in swapped},
        **{square: Mark.EFFECT for square in released},
    }


def test_quarod_pie_switch_is_echoed_without_marks() -> None:
    game = GAMES["quarod"]
    state = game.new_state(size=5)
    placed = game.apply(state, game.parse_move(state, "Bc3+Wc4"))
    switched = game.apply(placed, game.parse_move(placed, "swap"))
    marks, echo = marks_of(game, placed, switched, 1)
    assert marks == {}
    assert echo is not None and echo.startswith("White swap (pie rule")


def test_quadrupel_jump_marks_its_ends() -> None:
    game = GAMES["quadrupel"]
    state = game.new_state()
    after = game.apply(state, game.parse_move(state, "d4-d2"))  # over d3
    assert marks_of(game, state, after, 1) == ({"d4": Mark.MOVE, "d2": Mark.MOVE}, "Black d4-d2")
