"""Tactics: wins are taken, threats are blocked, Quarto's safe-piece rule, the exact
endgame search, and Quadrupel's extra turns, at every level.

Positions come from seeded random games and from hand-made position texts; what counts
as a win or a threat is checked through the game protocol alone (apply, outcome), not
through the engine's own tactics.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from pbm.bots.engine import LEVELS, LOST, WON, choose, tactics_for
from pbm.bots.exact import Solver
from pbm.bots.quad_tactics import four_squares
from pbm.bots.quarto_exact import QuartoExact
from pbm.bots.tactics import Clock
from pbm.games import GAMES, AnyGame, find_game
from pbm.games.base import Move, State
from pbm.games.quad_board import FULL, exact_four
from pbm.games.quarod_board import PIE
from tests.bots.judge import allows_a_win, wins

ITERATIONS = 30
SECONDS = 60.0


def wins_surely(game: AnyGame, state: State, move: Move) -> bool:
    """A win at once, or (Quadrupel's added-value and combination games) a QUADRUPEL
    that the opponent cannot match in his extra turns."""
    if wins(game, state, move):
        return True
    seat = game.to_move(state)
    assert seat is not None  # `move` is legal, so someone is to move
    after = game.apply(state, move)
    return getattr(after, "extra", None) is not None and _extra_value(game, after, seat) == 1.0


def loses(game: AnyGame, state: State, move: Move) -> bool:
    outcome = game.outcome(game.apply(state, move))
    return outcome is not None and outcome.winner not in (None, game.to_move(state))


def positions(name: str, count: int = 40, max_moves: int = 70) -> Iterator[State]:
    """Positions of seeded random games (Quarod: half of them with the pie switch)."""
    game, options = find_game(name)
    for seed in range(count):
        rng = random.Random(seed)
        state = game.new_state(**options)
        while game.to_move(state) is not None:
            moves = game.legal_moves(state)
            if len(moves) <= max_moves:
                yield state
            move = PIE if PIE in moves and seed % 2 and name == "quarod" else rng.choice(moves)
            state = game.apply(state, move)


@cache
def win_positions(name: str) -> list[State]:
    """Positions where the mover can win at once, but not with every move."""
    game, _ = find_game(name)
    found = []
    for state in positions(name):
        flags = [wins(game, state, m) for m in game.legal_moves(state)]
        if any(flags) and not all(flags):
            found.append(state)
            if len(found) == 3:
                break
    return found


@cache
def threat_positions(name: str) -> list[State]:
    """Positions where the mover cannot win at once, some moves let the opponent win
    next, and some move neither loses at once nor lets the opponent win."""
    game, _ = find_game(name)
    found = []
    for state in positions(name, max_moves=40):
        moves = game.legal_moves(state)
        if any(wins(game, state, m) for m in moves):
            continue
        flags = [allows_a_win(game, state, m) for m in moves]
        good = [m for m, f in zip(moves, flags, strict=True) if not f and not loses(game, state, m)]
        if any(flags) and good:
            found.append(state)
            if len(found) == 3:
                break
    return found


NAMES = [
    "quarto",
    "quad",
    "quadrature",
    "quarod",
    "quadrupel",
    "quadrupel-added",
    "quadrupel-points",
    "quadrupel-position",
    "quadrupel-combination",
]


def _decide(game: AnyGame, state: State, level: int, seed: int = 5) -> Any:
    seat = game.to_move(state)
    assert seat is not None
    return choose(game, state, seat, level=level, seconds=SECONDS, seed=seed, iterations=ITERATIONS)


@pytest.mark.parametrize("name", NAMES)
def test_a_win_in_one_is_taken_at_every_level(name: str) -> None:
    game, _ = find_game(name)
    found = win_positions(name)
    assert found, "the random games hold such positions"
    for state in found:
        for level in LEVELS:
            decision = _decide(game, state, level)
            assert decision.move is not None and wins_surely(game, state, decision.move)
            assert decision.verdict == WON


@pytest.mark.parametrize("name", NAMES)
def test_a_threat_is_blocked_at_every_level(name: str) -> None:
    game, _ = find_game(name)
    found = threat_positions(name)
    assert found, "the random games hold such positions"
    for state in found:
        for level in LEVELS:
            decision = _decide(game, state, level)
            assert decision.move is not None
            assert not allows_a_win(game, state, decision.move), decision.text


# -- Quarto -----------------------------------------------------------------------------

QUARTO = GAMES["quarto"]
# Rows 1 and 4 each hold three tall pieces sharing nothing else; the held piece is
# short, so wherever it goes one tall line stays open: only short pieces are safe to give.
TWO_TALL_LINES = "TDRHTLRFTDQH./..../..../TLRHTDQFTLQH. SLRH"


def test_quarto_never_gives_a_winning_piece_while_a_safe_one_exists() -> None:
    state = QUARTO.load(TWO_TALL_LINES)
    assert any(allows_a_win(QUARTO, state, m) for m in QUARTO.legal_moves(state))
    for level in LEVELS:
        for seed in range(3):
            decision = _decide(QUARTO, state, level, seed)
            assert decision.move is not None
            assert not allows_a_win(QUARTO, state, decision.move), decision.text
            assert decision.text.split()[1].startswith("S")  # a short piece


def test_quarto_lost_when_every_piece_left_wins_for_the_opponent() -> None:
    # From a seeded random game: wherever SLRH goes, every piece left completes some
    # line, so whatever is given loses.
    state = QUARTO.load("TLQFTDQFTLQH./..SDRHTDRF/SLRFSDRF.TDQH/...TDRH SLRH")
    moves = QUARTO.legal_moves(state)
    assert not any(wins(QUARTO, state, m) for m in moves)
    assert all(allows_a_win(QUARTO, state, m) for m in moves)
    for level in LEVELS:
        decision = _decide(QUARTO, state, level)
        assert decision.resign and decision.verdict == LOST and decision.accepts_draw
        assert decision.text == "resign"


def _quarto_value(state: State) -> float:
    """The value for the player to move under perfect play, by plain minimax."""
    best = 0.0
    mover = QUARTO.to_move(state)
    for move in QUARTO.legal_moves(state):
        after = QUARTO.apply(state, move)
        outcome = QUARTO.outcome(after)
        if outcome is not None:
            value = 0.5 if outcome.winner is None else float(outcome.winner == mover)
        else:
            value = 1.0 - _quarto_value(after)
        best = max(best, value)
        if best == 1.0:
            break
    return best


def test_quarto_exact_endgame_agrees_with_plain_minimax() -> None:
    """Won, drawn and lost positions with five empty squares: the verdict is the plain
    minimax value, the move keeps it, and a lost position is played on (not resigned)
    unless every move loses at once."""
    rng = random.Random(4)
    seen: set[str] = set()
    for _ in range(60):
        if len(seen) == 3:
            break
        state = QUARTO.new_state()
        while QUARTO.to_move(state) is not None and len(state.empties) > 5:
            moves = QUARTO.legal_moves(state)
            quiet = [m for m in moves if not allows_a_win(QUARTO, state, m)] or moves
            state = QUARTO.apply(state, rng.choice(quiet))
        if QUARTO.to_move(state) is None:
            continue
        value = _quarto_value(state)
        decision = _decide(QUARTO, state, 4)
        expected = {1.0: "won", 0.5: "drawn", 0.0: "lost"}[value]
        assert decision.verdict == expected
        seen.add(expected)
        moves = QUARTO.legal_moves(state)
        lost_at_once = all(allows_a_win(QUARTO, state, m) for m in moves)
        assert decision.resign == lost_at_once
        assert decision.accepts_draw == (value < 1.0)
        if decision.move is not None:
            after = QUARTO.apply(state, decision.move)
            outcome = QUARTO.outcome(after)
            kept = (
                (1.0 if outcome.winner is not None else 0.5)
                if outcome is not None
                else 1.0 - _quarto_value(after)
            )
            assert kept == value
    assert seen == {"won", "drawn", "lost"}


def test_quarto_own_solver_agrees_with_the_generic_one() -> None:
    """The fast Quarto search against the protocol-level one, at seven empty squares."""
    tactics = tactics_for(QUARTO)
    rng = random.Random(8)
    for _ in range(5):
        state = QUARTO.new_state()
        while QUARTO.to_move(state) is not None and len(state.empties) > 7:
            moves = QUARTO.legal_moves(state)
            quiet = [m for m in moves if not allows_a_win(QUARTO, state, m)] or moves
            state = QUARTO.apply(state, rng.choice(quiet))
        if QUARTO.to_move(state) is None:
            continue
        moves = QUARTO.legal_moves(state)
        fast = QuartoExact(tactics, Clock(None)).solve(state, moves)
        plain = Solver(tactics, Clock(None)).solve(state, moves)
        assert fast is not None and plain is not None
        assert fast[0] == plain[0]
        if fast[0] != 1.0:  # both stop at the first winning move
            assert sorted(fast[1]) == sorted(plain[1])


# -- Quad ---------------------------------------------------------------------------------


def test_quad_four_squares_match_the_rules_exact_four() -> None:
    rng = random.Random(2)
    for _ in range(3000):
        own = other = 0
        for square in rng.sample(range(64), rng.randint(3, 30)):
            if rng.random() < 0.5:
                own |= 1 << square
            else:
                other |= 1 << square
        if exact_four(own):
            continue
        empty = ~(own | other) & FULL
        expected = sum(1 << s for s in range(64) if empty >> s & 1 and exact_four(own | 1 << s))
        assert four_squares(own, empty) == expected


# -- Quadrupel's extra turns -------------------------------------------------------------


def _extra_value(game: AnyGame, state: State, seat: int) -> float:
    """Brute force over the extra turns: the value for `seat` (the chaser moves)."""
    outcome = game.outcome(state)
    if outcome is not None:
        return 0.5 if outcome.winner is None else float(outcome.winner == seat)
    mover = game.to_move(state)
    values = [_extra_value(game, game.apply(state, m), seat) for m in game.legal_moves(state)]
    return max(values) if mover == seat else min(values)


@pytest.mark.parametrize("name", ["quadrupel-added", "quadrupel-combination"])
def test_quadrupel_builds_only_quadrupels_whose_extra_turns_it_survives(name: str) -> None:
    """Where completing a QUADRUPEL starts extra turns, the bot completes one only when
    the opponent cannot match it in them, and takes one that is sure to win."""
    game, _ = find_game(name)
    checked = 0
    for state in positions(name, count=60):
        if state.pending or state.extra is not None:
            continue
        seat = game.to_move(state)
        assert seat is not None  # positions() yields running games only
        starters = {}
        for move in game.legal_moves(state):
            after = game.apply(state, move)
            if after.extra is not None:
                starters[move] = _extra_value(game, after, seat)
        if not starters:
            continue
        decision = _decide(game, state, 1)
        assert decision.move is not None
        if decision.move in starters:
            assert starters[decision.move] >= 0.5
        if 1.0 in starters.values():
            assert starters.get(decision.move) == 1.0 or wins(game, state, decision.move)
        checked += 1
        if checked == 4:
            break
    assert checked
