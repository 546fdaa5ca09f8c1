"""Quadrupel's secret setups stay secret in the pictures: until both setups are in, the
picture (bytes, alt and words) a seat other than the author gets is the same whatever
the author chose; the author sees his dots, and once both are in everybody does."""

from __future__ import annotations

import pytest

from pbm.games import GAMES
from pbm.games.quadrupel import DOTTED
from pbm.pictures.picture import draw
from pbm.services.play.picture_words import picture_words

# The words of the pictures as the templates hold them.
WORDS = picture_words()

GAME = GAMES["quadrupel"]
BLACK, WHITE = 0, 1
VARIANTS = sorted(DOTTED)


def two_setups(variant: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two different setups Black may choose."""
    start = GAME.new_state(variant=variant)
    moves = GAME.legal_moves(start)
    return moves[0], moves[-1]


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_setup_does_not_leak_before_both_are_in(variant: str) -> None:
    start = GAME.new_state(variant=variant)
    first, other = two_setups(variant)
    chose_first, chose_other = GAME.apply(start, first), GAME.apply(start, other)
    for seat in (WHITE, None):
        a = draw(GAME, chose_first, seat=seat, words=WORDS, previous=start)
        b = draw(GAME, chose_other, seat=seat, words=WORDS, previous=start)
        assert a.png == b.png
        assert (a.alt, a.words) == (b.alt, b.words)
        assert "dots not shown yet" in a.words[0]
        assert "kept secret" in a.alt
    # The author sees his own dots: the check above can tell two setups apart.
    mine_first = draw(GAME, chose_first, seat=BLACK, words=WORDS, previous=start)
    mine_other = draw(GAME, chose_other, seat=BLACK, words=WORDS, previous=start)
    assert mine_first.png != mine_other.png
    assert mine_first.words[0] != mine_other.words[0]
    assert "dots not shown yet" not in mine_first.words[0]


@pytest.mark.parametrize("variant", VARIANTS)
def test_both_setups_in_reveals_them_to_everybody(variant: str) -> None:
    start = GAME.new_state(variant=variant)
    first, other = two_setups(variant)
    revealed = []
    for black_setup in (first, other):
        waiting = GAME.apply(start, black_setup)
        done = GAME.apply(waiting, GAME.legal_moves(waiting)[0])
        revealed.append((waiting, done))
    for seat in (WHITE, None):
        a = draw(GAME, revealed[0][1], seat=seat, words=WORDS, previous=revealed[0][0])
        b = draw(GAME, revealed[1][1], seat=seat, words=WORDS, previous=revealed[1][0])
        assert a.png != b.png
        assert "dots not shown yet" not in " ".join(a.words)


def test_the_opponent_setup_is_hidden_from_the_first_to_set_up() -> None:
    """White's setup, made second, is revealed at once; Black's own view before it shows
    White's stones as not shown yet."""
    start = GAME.new_state(variant="points")
    waiting = GAME.apply(start, GAME.legal_moves(start)[0])
    words = draw(GAME, waiting, seat=BLACK, words=WORDS).words
    assert "dots not shown yet" in words[1] and "dots not shown yet" not in words[0]
