"""Glicko-2 (Mark Glickman, "Example of the Glicko-2 system", 2013), one rating period
per game: pbm rates each game when it ends, as correspondence sites do.

The paper's worked example (1500/200/0.06 against three opponents, giving 1464.06,
151.52, 0.05999) is a test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCALE = 173.7178
START_RATING = 1500.0
START_RD = 350.0
START_VOLATILITY = 0.06
TAU = 0.5  # constrains volatility change; the paper suggests 0.3..1.2
EPSILON = 0.000001


@dataclass(frozen=True, slots=True)
class Glicko:
    rating: float = START_RATING
    rd: float = START_RD
    volatility: float = START_VOLATILITY


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _e(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def _new_volatility(sigma: float, phi: float, v: float, delta: float, tau: float) -> float:
    """Step 5 of the paper: the Illinois algorithm for the new volatility."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        num = ex * (delta * delta - phi * phi - v - ex)
        den = 2.0 * (phi * phi + v + ex) ** 2
        return num / den - (x - a) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def update(player: Glicko, results: Sequence[tuple[Glicko, float]], tau: float = TAU) -> Glicko:
    """The player's rating after one rating period with `results` (opponent, score)."""
    mu = (player.rating - START_RATING) / SCALE
    phi = player.rd / SCALE
    if not results:
        # Step 6 only: an idle period widens the deviation.
        phi_star = math.sqrt(phi * phi + player.volatility**2)
        return Glicko(player.rating, min(phi_star * SCALE, START_RD), player.volatility)
    opponents = [((o.rating - START_RATING) / SCALE, o.rd / SCALE, score) for o, score in results]
    v_inv = 0.0
    delta_sum = 0.0
    for mu_j, phi_j, score in opponents:
        g = _g(phi_j)
        e = _e(mu, mu_j, phi_j)
        v_inv += g * g * e * (1.0 - e)
        delta_sum += g * (score - e)
    v = 1.0 / v_inv
    delta = v * delta_sum
    sigma = _new_volatility(player.volatility, phi, v, delta, tau)
    phi_star = math.sqrt(phi * phi + sigma * sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * delta_sum
    return Glicko(new_mu * SCALE + START_RATING, new_phi * SCALE, sigma)


def rate_game(first: Glicko, second: Glicko, first_score: float) -> tuple[Glicko, Glicko]:
    """Both players' ratings after one game, each game its own rating period."""
    return (
        update(first, [(second, first_score)]),
        update(second, [(first, 1.0 - first_score)]),
    )
