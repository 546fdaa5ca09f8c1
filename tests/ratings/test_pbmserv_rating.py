"""pbmserv's rating against the original server's sample mails and hand computation."""

import pytest

from pbm.ratings.pbmserv import Rating, expected_score, rate_game, rate_multiplayer, update


def test_first_game_draw_between_new_players_gives_1624_each():
    # Sample mail: "alice's rating is 1624 (provisional)." after a first drawn game.
    alice, bob = rate_game(Rating(), Rating(), 0.5)
    assert (alice.shown, bob.shown) == (1624, 1624)
    assert alice.games == bob.games == 1 and alice.provisional


def test_provisional_winner_and_new_loser_give_1737_and_1436():
    # Sample mail: alice (1624 after one game) beats carol (new): 1737 and 1436.
    alice = Rating(1624.0, 1)
    alice2, carol = rate_game(alice, Rating(), 1.0)
    # alice: value (1624+1600)/2+200 = 1812; (1624*1+1812)/2 + (1720-1624)/5 = 1737.2
    assert alice2.value == pytest.approx(1737.2)
    # carol: value 1612-200 = 1412; 1412/1 + (1720-1600)/5 = 1436
    assert carol.value == pytest.approx(1436.0)
    assert (alice2.shown, carol.shown) == (1737, 1436)


def test_provisional_against_established_uses_opponent_plus_minus_400():
    me = Rating(1500.0, 5)
    pro = Rating(1800.0, 40)
    won = update(me, pro, 1.0)
    # value 2200; (1500*5 + 2200)/6 + (1720-1500)/5 = 1616.67 + 44
    assert won.value == pytest.approx((1500 * 5 + 2200) / 6 + 44)
    lost = update(me, pro, 0.0)
    assert lost.value == pytest.approx((1500 * 5 + 1400) / 6 + 44)


def test_established_players_use_elo_with_k_32():
    a, b = Rating(1700.0, 30), Rating(1500.0, 25)
    e = expected_score(1700, 1500)
    assert e == pytest.approx(1 / (1 + 10 ** (-0.5)))
    a2, b2 = rate_game(a, b, 0.0)
    assert a2.value == pytest.approx(1700 - 32 * e)
    assert b2.value == pytest.approx(1500 + 32 * e)
    assert a2.value + b2.value == pytest.approx(3200)


def test_established_against_provisional_scales_k_by_opponent_games():
    me, newbie = Rating(1600.0, 50), Rating(1600.0, 5)
    won = update(me, newbie, 1.0)
    assert won.value == pytest.approx(1600 + 32 * 5 / 20 * 0.5)


def test_twentieth_game_makes_a_rating_established():
    r = Rating(1600.0, 19)
    assert r.provisional
    assert not update(r, Rating(), 0.5).provisional


def test_results_are_clipped_to_win_draw_loss():
    with pytest.raises(ValueError):
        update(Rating(), Rating(), 0.7)


def test_multiplayer_rates_against_the_average_of_the_others():
    field = [Rating(1600.0, 0), Rating(1700.0, 30), Rating(1500.0, 30)]
    new = rate_multiplayer(field, [1.0, 0.0, 0.0])
    assert new[0] == update(field[0], Rating(1600.0, 30), 1.0)
    assert new[1] == update(field[1], Rating(1550.0, 15), 0.0)
