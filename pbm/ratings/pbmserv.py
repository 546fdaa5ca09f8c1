"""pbmserv's rating: start 1600, provisional for the first 20 games, then Elo with K=32.

The formulas follow the original server (docs/correspondence.md writes them out); its
published sample mails (1624 after a first draw, 1737 and 1436 after a provisional
player beats a new one) are tests.
"""

from __future__ import annotations

from dataclasses import dataclass

START = 1600.0
PROVISIONAL_GAMES = 20
K = 32.0
# A provisional player's result is valued at the mean rating +-200 against another
# provisional player, or at the opponent's rating +-400 against an established one.
PROVISIONAL_SPREAD = 200.0
ESTABLISHED_SPREAD = 400.0
# Provisional ratings are pulled towards 1720 by a fifth of the distance each game.
PULL_CENTRE = 1720.0
PULL_DIVISOR = 5.0


@dataclass(frozen=True, slots=True)
class Rating:
    value: float = START
    games: int = 0

    @property
    def provisional(self) -> bool:
        return self.games < PROVISIONAL_GAMES

    @property
    def shown(self) -> int:
        """The rating as mails print it (rounded half up, like the original's %d of +0.5)."""
        return int(self.value + 0.5)


def expected_score(own: float, opponent: float) -> float:
    # Typed apart because float ** float is typed Any (a negative base gives a complex).
    odds: float = 10.0 ** ((opponent - own) / 400.0)
    return 1.0 / (1.0 + odds)


def update(own: Rating, opponent: Rating, score: float) -> Rating:
    """`own` after one game against `opponent`; score 1 win, 0.5 draw, 0 loss.

    Both ratings are the ones held before the game (the update is simultaneous).
    """
    if score not in (0.0, 0.5, 1.0):
        raise ValueError("score must be 0, 0.5 or 1 (results are clipped to win/draw/loss)")
    sign = {1.0: 1.0, 0.5: 0.0, 0.0: -1.0}[score]
    if own.provisional:
        if opponent.provisional:
            value = (own.value + opponent.value) / 2.0 + sign * PROVISIONAL_SPREAD
        else:
            value = opponent.value + sign * ESTABLISHED_SPREAD
        new = (own.value * own.games + value) / (own.games + 1)
        new += (PULL_CENTRE - own.value) / PULL_DIVISOR
        return Rating(new, own.games + 1)
    k = K
    if opponent.provisional:
        # A provisional opponent's rating is less certain, so it moves an established one less.
        k *= opponent.games / PROVISIONAL_GAMES
    new = own.value + k * (score - expected_score(own.value, opponent.value))
    return Rating(new, own.games + 1)


def rate_game(first: Rating, second: Rating, first_score: float) -> tuple[Rating, Rating]:
    """Both players' new ratings after one two-player game."""
    return update(first, second, first_score), update(second, first, 1.0 - first_score)


def rate_multiplayer(ratings: list[Rating], scores: list[float]) -> list[Rating]:
    """Each player against the average rating and games of the others (pbmserv's rule).

    `scores[i]` is player i's clipped result against the field: 1, 0.5 or 0.
    """
    result = []
    for i, own in enumerate(ratings):
        others = [r for j, r in enumerate(ratings) if j != i]
        field = Rating(
            sum(r.value for r in others) / len(others),
            round(sum(r.games for r in others) / len(others)),
        )
        result.append(update(own, field, scores[i]))
    return result
