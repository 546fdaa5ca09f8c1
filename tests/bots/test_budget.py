"""The checks a level promises hold at any budget: in a position where a block exists
and most moves let the opponent win at once, every level blocks at 0.005 s, 0.02 s and
2 s a move, twenty seeds each (the 2 s ones marked slow: about two and a half
minutes); and Quarod's pie decision reads the clock the engine gives it.

What counts as letting the opponent win is found through the game protocol alone
(apply, outcome), not through the engine's tactics.
"""

from __future__ import annotations

import logging
import random
from functools import cache

import pytest

from pbm.bots.engine import LEVELS, choose, tactics_for
from pbm.bots.quadrature_tactics import QuadratureTactics
from pbm.bots.tactics import Clock, Tactics
from pbm.games import GAMES, find_game
from pbm.games.base import State
from pbm.games.quarod_board import PIE
from tests.bots.judge import allows_a_win, wins

# The Quadrature position: White to move, 7 of 11 moves let Black win at once.
QUADRATURE = "3#7/11/11/1##4#1#1/2#1#6/1#1#3#1#1/#4#1#3/6#O3/11/9O1/6O4 w 0 0 threefold"
QUADRATURE_LOSING = {"g1-f1", "g1-h1", "j2-i1", "j2-i2", "j2-j1", "j2-k1", "j2-k2"}
# From seeded random games, the positions where most moves let the opponent win at once.
POSITIONS = {
    "quadrature": QUADRATURE,
    "quarto": "SDQF..TLQH/TDQHSDQHSLRHTDQF/...TDRH/SLQHTDRFTLRH. SDRF advanced=no attributes=all",
    "quad": "12 11/1000 x 6/7 OX6/8/O7/O3X3/2O3X1/3X3X/1O6/5O2 -",
    "quarod": "eWsseseW/SWNNENnN/nw.sw.eW/ssEsseW./sNENSWWs/sWSeESwN/NWswEnww/.ENneeWW w kept",
}
# (seconds, seeds): twenty seeds at 2 s take about two and a half minutes, hence `slow`.
BUDGETS = [(0.005, 20), (0.02, 20), pytest.param(2.0, 20, marks=pytest.mark.slow)]


@cache
def block_position(name: str) -> State:
    """The named position, or (Quadrupel) the first position of seeded random games
    where at least nine moves in ten let the opponent win at once and one does not."""
    game, options = find_game(name)
    if name in POSITIONS:
        return game.load(POSITIONS[name])
    for seed in range(40):
        rng = random.Random(seed)
        state = game.new_state(**options)
        while game.to_move(state) is not None:
            moves = game.legal_moves(state)
            if len(moves) <= 40 and not any(wins(game, state, m) for m in moves):
                flags = [allows_a_win(game, state, m) for m in moves]
                if not all(flags) and sum(flags) >= 0.9 * len(moves):
                    return state
            state = game.apply(state, rng.choice(moves))
    raise AssertionError("no such position in the seeded games")


@pytest.mark.parametrize("name", ["quadrature", "quarto", "quad", "quarod", "quadrupel"])
@pytest.mark.parametrize(("seconds", "seeds"), BUDGETS)
def test_every_level_blocks_at_every_budget(name: str, seconds: float, seeds: int) -> None:
    game = GAMES[name]
    state = block_position(name)
    moves = game.legal_moves(state)
    losing = [m for m in moves if allows_a_win(game, state, m)]
    assert losing and len(losing) < len(moves)
    assert 2 * len(losing) > len(moves), "most moves let the opponent win at once"
    if name == "quadrature":
        assert {game.format_move(state, m) for m in losing} == QUADRATURE_LOSING
    seat = game.to_move(state)
    assert seat is not None
    for level in LEVELS:
        for seed in range(seeds):
            decision = choose(game, state, seat, level=level, seconds=seconds, seed=seed)
            assert decision.move is not None
            assert decision.move not in losing, (level, seed, decision.text)


def test_a_budget_below_the_checks_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    game = GAMES["quadrature"]
    state = game.load(QUADRATURE)
    with caplog.at_level(logging.WARNING, logger="pbm.bots.engine"):
        decision = choose(game, state, 1, level=1, seconds=0.0, seed=1)
    assert decision.move is not None and not allows_a_win(game, state, decision.move)
    assert "budget too small: quadrature level 1" in caplog.text


def test_quadrature_threat_check_agrees_with_the_protocol_default() -> None:
    """The bitboard must-block check against applying every reply."""
    game = GAMES["quadrature"]
    fast, plain = QuadratureTactics(game), Tactics(game)
    checked = 0
    for seed in range(4):
        rng = random.Random(seed)
        state = game.new_state()
        for _ in range(120):
            if game.to_move(state) is None:
                break
            moves = game.legal_moves(state)
            for move in rng.sample(moves, min(4, len(moves))):
                assert fast.threatened(state, move) == plain.threatened(state, move)
                checked += 1
            state = game.apply(state, rng.choice(moves))
    assert checked > 500


class CountingClock(Clock):
    """A clock that expires after a number of reads, and counts them."""

    def __init__(self, reads: int) -> None:
        super().__init__(None)
        self.reads = 0
        self.limit = reads

    def expired(self) -> bool:
        self.reads += 1
        return self.reads > self.limit


def _pie_state() -> State:
    game = GAMES["quarod"]
    state = game.new_state()
    state = game.apply(state, random.Random(3).choice(game.legal_moves(state)))
    assert PIE in game.legal_moves(state)
    return state


@pytest.mark.parametrize("reads", [0, 1, 5, 40])
def test_quarod_pie_decision_stops_when_the_clock_expires(reads: int) -> None:
    game = GAMES["quarod"]
    tactics = tactics_for(game)
    state = _pie_state()
    moves = game.legal_moves(state)
    clock = CountingClock(reads)
    move = tactics.one_move(state, moves, random.Random(1), clock)
    assert move in moves
    # The clock is read before each playout and every few plies of one: it is read
    # once more than the reads it allows, and never again after it expired.
    assert clock.reads == reads + 1
    if reads == 0:
        assert move != PIE  # no playout made: no swap


def test_quarod_pie_decision_plays_all_its_playouts_with_time() -> None:
    game = GAMES["quarod"]
    tactics = tactics_for(game)
    state = _pie_state()
    clock = CountingClock(10**6)
    tactics.one_move(state, game.legal_moves(state), random.Random(1), clock)
    assert clock.reads > 48  # one read per playout at least, all 48 played


def test_the_engine_gives_the_pie_decision_its_budget() -> None:
    """Level 1 decides the pie by its playouts alone: those of seed 2 favour the
    opening's maker, so with time it swaps; with no time left after the checks it makes
    no playout and does not. (How long a decision takes against its budget is measured
    by benchmarks/bots.py, never asserted here.)"""
    game = GAMES["quarod"]
    state = _pie_state()
    seat = game.to_move(state)
    assert seat is not None
    assert choose(game, state, seat, level=1, seconds=60.0, seed=2).move == PIE
    assert choose(game, state, seat, level=1, seconds=0.0, seed=2).move != PIE
