"""Bots finish whole games of every game and variant, against each other and against a
random player, and every move they make is legal; a fixed seed gives a fixed decision.

Searches are capped by iterations (not time), so the games are the same on every
machine; the caps are small to keep the file fast. Games with a long ply cap are played
with a lower one (an option every game has, and one of their example sets).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from pbm.bots.engine import LEVELS, Decision, choose
from pbm.games import GAMES, AnyGame
from pbm.games.base import State

ITERATIONS = 12
SECONDS = 60.0  # never reached: the iteration caps bind
RANDOM = 0
# Levels by challenge order, taken in turn by the example option sets of each game: one
# game against the random player (both seats in turn) and one between two bots.
AGAINST_RANDOM = [(4, RANDOM), (RANDOM, 3), (2, RANDOM), (RANDOM, 1)]
BOT_AGAINST_BOT = [(4, 1), (2, 3), (3, 4), (1, 2)]
# Lower ply caps, so that shuffling bots end in a few hundred plies.
SHORT: dict[str, dict[str, Any]] = {"quad": {"plycap": 150}, "quadrupel": {"plycap": 60}}

CASES = [
    pytest.param(game, dict(options), pairs[i % len(pairs)], id=f"{name}-{i}-{kind}")
    for name, game in GAMES.items()
    for i, options in enumerate(game.example_options)
    for kind, pairs in (("random", AGAINST_RANDOM), ("bots", BOT_AGAINST_BOT))
]


def _short(game: AnyGame, options: dict[str, Any]) -> dict[str, Any]:
    merged = {**SHORT.get(game.name, {}), **options}
    if "plycap" in options:
        merged["plycap"] = options["plycap"]
    return merged


def _bot_move(game: AnyGame, state: State, level: int, seed: int) -> Decision:
    seat = game.to_move(state)
    assert seat is not None
    decision = choose(
        game, state, seat, level=level, seconds=SECONDS, seed=seed, iterations=ITERATIONS
    )
    if decision.move is not None:
        legal = game.legal_moves(state)
        assert decision.move in legal, decision.text
        # The text is the move in the game's notation, as a player would mail it.
        assert game.parse_move(state, decision.text) == decision.move
    else:
        assert decision.text == "resign" and decision.verdict == "lost"
    return decision


def _play(game: AnyGame, options: dict[str, Any], levels: tuple[int, int], seed: int) -> str:
    state = game.new_state(**options)
    rng = random.Random(seed)
    for ply in range(5000):
        seat = game.to_move(state)
        if seat is None:
            outcome = game.outcome(state)
            assert outcome is not None
            return outcome.reason
        level = levels[game.player_seats(state).index(seat)]
        if level == RANDOM:
            move = rng.choice(game.legal_moves(state))
        else:
            decision = _bot_move(game, state, level, seed * 1000 + ply)
            if decision.move is None:
                return "resigned"
            move = decision.move
        state = game.apply(state, move)
    raise AssertionError("the game did not end")


@pytest.mark.parametrize(("game", "options", "levels"), CASES)
def test_bots_finish_whole_games_with_legal_moves(
    game: AnyGame, options: dict[str, Any], levels: tuple[int, int]
) -> None:
    assert _play(game, _short(game, options), levels, seed=7)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_every_level_is_deterministic_for_a_seed(name: str) -> None:
    game = GAMES[name]
    state = game.new_state(**SHORT.get(name, {}))
    rng = random.Random(3)
    for _ in range(6):  # a few plies in, where the choice is not forced
        state = game.apply(state, rng.choice(game.legal_moves(state)))
    seat = game.to_move(state)
    assert seat is not None
    for level in LEVELS:
        runs = [
            choose(game, state, seat, level=level, seconds=SECONDS, seed=s, iterations=40)
            for s in (11, 11, 12)
        ]
        assert runs[0].move == runs[1].move
        assert runs[0].iterations == runs[1].iterations
        assert runs[0].value == runs[1].value


def test_levels_are_checked() -> None:
    game = GAMES["quarto"]
    state = game.new_state()
    with pytest.raises(ValueError, match="level"):
        choose(game, state, 0, level=5)
    with pytest.raises(ValueError, match="not to move"):
        choose(game, state, 1, level=1)


def test_the_time_budget_bounds_a_search_without_a_cap() -> None:
    """No iteration cap: the clock alone ends the search, and it ends within budget."""
    game = GAMES["quarod"]
    decision = choose(game, game.new_state(), 0, level=4, seconds=0.3, seed=1)
    assert decision.move in game.legal_moves(game.new_state())
    assert decision.iterations > 0
