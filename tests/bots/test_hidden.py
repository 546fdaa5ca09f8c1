"""Hidden information stays hidden: in Quadrupel's blind setups (point, position and
combination games) White sets up without seeing Black's setup, and so does the bot."""

from __future__ import annotations

import random

import pytest

from pbm.bots.engine import LEVELS, choose, tactics_for
from pbm.games import find_game

BLIND = ["quadrupel-points", "quadrupel-position", "quadrupel-combination"]


def _after_black_setup(name: str, which: int):
    game, options = find_game(name)
    state = game.new_state(**options)
    setups = game.legal_moves(state)
    return game, game.apply(state, setups[which])


@pytest.mark.parametrize("name", BLIND)
def test_white_decides_the_same_whatever_black_set_up(name: str) -> None:
    game, first = _after_black_setup(name, 0)
    _, second = _after_black_setup(name, -1)
    assert first != second and game.to_move(first) == game.to_move(second) == 1
    for level in LEVELS:
        one, two = (
            choose(game, state, 1, level=level, seconds=60, seed=9, iterations=60)
            for state in (first, second)
        )
        assert one.move == two.move and one.value == two.value
        assert one.move in game.legal_moves(first)


@pytest.mark.parametrize("name", BLIND)
def test_the_redacted_position_shows_no_hidden_dots(name: str) -> None:
    game, state = _after_black_setup(name, 5)
    tactics = tactics_for(game)
    seen = game.dump(tactics.redact(state, 1))
    black = next(word for word in seen.split() if word.startswith("black="))
    assert ":" not in black  # no dots
    assert black in game.dump(game.new_state(**find_game(name)[1]))
    assert tactics.hidden(tactics.redact(state, 1), 1)
    # Black sees his own setup, and once both are in nothing is hidden.
    assert tactics.redact(state, 0) == state
    both = game.apply(state, game.legal_moves(state)[0])
    assert tactics.redact(both, 0) == both and tactics.redact(both, 1) == both


def test_guesses_of_the_hidden_setup_are_legal_setups() -> None:
    game, state = _after_black_setup("quadrupel-points", 3)
    tactics = tactics_for(game)
    view = tactics.redact(state, 1)
    guesses = {game.dump(tactics.determinize(view, 1, random.Random(s))) for s in range(12)}
    assert len(guesses) > 1
    for text in guesses:
        guess = game.load(text)
        assert game.to_move(guess) == 1 and guess.pending == 2
