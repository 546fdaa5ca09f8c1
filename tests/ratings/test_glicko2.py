"""Glicko-2 against the worked example of Glickman's paper."""

import pytest

from pbm.ratings.glicko2 import Glicko, rate_game, update


def test_paper_worked_example():
    player = Glicko(1500.0, 200.0, 0.06)
    results = [
        (Glicko(1400.0, 30.0), 1.0),
        (Glicko(1550.0, 100.0), 0.0),
        (Glicko(1700.0, 300.0), 0.0),
    ]
    new = update(player, results, tau=0.5)
    assert new.rating == pytest.approx(1464.06, abs=0.01)
    assert new.rd == pytest.approx(151.52, abs=0.01)
    assert new.volatility == pytest.approx(0.05999, abs=0.00001)


def test_idle_period_widens_the_deviation_only():
    player = Glicko(1500.0, 200.0, 0.06)
    idle = update(player, [])
    assert idle.rating == 1500.0
    assert idle.rd == pytest.approx((200.0**2 + (0.06 * 173.7178) ** 2) ** 0.5, abs=1e-6)


def test_a_win_moves_ratings_apart_symmetrically_for_equal_players():
    a, b = rate_game(Glicko(), Glicko(), 1.0)
    assert a.rating > 1500 > b.rating
    assert a.rating - 1500 == pytest.approx(1500 - b.rating)
    assert a.rd < 350 and b.rd < 350
