"""Pictures name players as the text does (issue 21, point 15; issue 26, point 5): "alice
wins", "Last move: bob d1", "alice to move", never the seat ("First wins"), with a
legend of who holds which side where the sides are colours; and Quadrupel's caption
names its variant, never the bare "QUADRUPEL" that reads as a shape just made."""

from __future__ import annotations

import random
from typing import Any

import pytest

from pbm.games import GAMES, AnyGame
from pbm.pictures.picture import draw
from pbm.services.play.picture_words import picture_words

# The words of the pictures as the templates hold them.
WORDS = picture_words()

PLAYERS = ("alice", "bob")


def playout(game: AnyGame, seed: int, **options: Any) -> list[tuple[Any, Any]]:
    """(state, move into it) of a seeded random game, start to end."""
    rng = random.Random(seed)
    state = game.new_state(**options)
    played: list[tuple[Any, Any]] = [(state, None)]
    while game.to_move(state) is not None:
        move = rng.choice(game.legal_moves(state))
        state = game.apply(state, move)
        played.append((state, move))
    return played


def player_of(game: AnyGame, state: Any, seat: int) -> str:
    """Who holds `seat` in `state`, found as the text board finds him."""
    return PLAYERS[list(game.player_seats(state)).index(seat)]


@pytest.mark.parametrize("name", sorted(GAMES))
def test_the_winner_and_the_last_mover_are_named(name: str) -> None:
    game = GAMES[name]
    for seed in range(40):
        played = playout(game, seed)
        outcome = game.outcome(played[-1][0])
        if outcome is not None and outcome.winner is not None:
            break
    else:
        pytest.fail(f"no won game of {name} in 40 seeds")
    (before, _), (after, move) = played[-2], played[-1]
    picture = draw(game, after, seat=None, words=WORDS, previous=before, players=PLAYERS)
    winner = player_of(game, after, outcome.winner)
    mover = player_of(game, before, game.to_move(before) or 0)
    assert f"Game over, {winner} wins: " in picture.alt
    assert f"Last move: {mover} {game.describe_move(before, move)}" in picture.words
    for seat_name in game.seats:
        assert f"{seat_name} wins" not in picture.alt
        assert f"Last move: {seat_name} " not in " ".join(picture.words)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_the_player_to_move_is_named(name: str) -> None:
    game = GAMES[name]
    (before, _), (after, _) = playout(game, 5)[3:5]
    picture = draw(game, after, seat=0, words=WORDS, previous=before, players=PLAYERS)
    to_move = player_of(game, after, game.to_move(after) or 0)
    assert picture.alt.startswith(f"{game.title}: {to_move} ")
    if name == "quarto":  # "First" and "Second" are no sides the picture shows
        assert not any(":" in w and "alice" in w and "bob" in w for w in picture.words)
    else:
        legend = ", ".join(f"{game.seat_name(s)}: {player_of(game, after, s)}" for s in (0, 1))
        assert legend in picture.words


def test_without_players_the_seats_are_named() -> None:
    game = GAMES["quarto"]
    (before, _), (after, _) = playout(game, 5)[3:5]
    picture = draw(game, after, seat=0, words=WORDS, previous=before)
    assert picture.alt.startswith(f"Quarto: {game.seat_name(game.to_move(after) or 0)} to ")
    assert f"Last move: {game.seat_name(game.to_move(before) or 0)} " in " ".join(picture.words)
    assert "alice" not in picture.alt


def test_the_pie_switch_changes_who_holds_a_colour() -> None:
    game = GAMES["quarod"]
    start = game.new_state()
    placed = game.apply(start, game.legal_moves(start)[0])
    switched = game.apply(placed, game.parse_move(placed, "swap"))
    picture = draw(game, switched, seat=None, words=WORDS, previous=placed, players=PLAYERS)
    # bob held White and took the switch: now alice holds White, bob Black.
    assert "Last move: bob " in " ".join(picture.words)
    assert "Black: bob, White: alice" in picture.words


@pytest.mark.parametrize("variant", ["basic", "added", "points", "position", "combination"])
def test_quadrupel_names_its_variant_not_a_shape(variant: str) -> None:
    game = GAMES["quadrupel"]
    played = playout(game, 2, variant=variant)
    (before, _), (after, _) = played[-2], played[-1]
    picture = draw(game, after, seat=None, words=WORDS, previous=before, players=PLAYERS)
    assert not any(w.split(",")[0].strip() == "QUADRUPEL" for w in picture.words)
    (caption,) = [w for w in picture.words if w.startswith("Variant: ")]
    assert "QUADRUPEL" not in caption
