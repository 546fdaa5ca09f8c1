"""Swiss pairing by maximum-weight matching, checked against an exhaustive oracle.

The oracle tries every pairing of the field (a perfect matching of the pairs that have
not met, plus the bye for an odd field) and keeps the least cost vector, compared as a
tuple, digit by digit; `pair_round` must find a pairing exactly when the oracle does,
and one that costs exactly as little. The vectors come from the module's own
`_Problem.pair_cost` / `unpaired_cost`; the examples below pin down what they mean.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Hashable, Sequence
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbm.tournaments import swiss
from pbm.tournaments.swiss import PairingError, SwissPlayer, SwissRound, pair_round

Cost = tuple[int, ...]


def _add(x: Cost, y: Cost) -> Cost:
    return tuple(a + b for a, b in zip(x, y, strict=True))


def _problem(players: Sequence[SwissPlayer]) -> swiss._Problem:
    field = swiss._rank(players)
    return swiss._Problem(field, field.ranked)


def oracle(players: Sequence[SwissPlayer]) -> Cost | None:
    """The least cost of any valid pairing of `players`, or None when there is none.

    Valid: every pair new, everyone paired but one player when the field is odd, and
    that bye to a player who has not had one unless everyone has.
    """
    problem = _problem(players)
    ranked = problem.field.ranked
    n = len(ranked)
    pair: dict[tuple[int, int], Cost] = {
        (i, j): tuple(problem.pair_cost(ranked[i], ranked[j]))
        for i in range(n)
        for j in range(i + 1, n)
        if ranked[j].id not in ranked[i].opponents
    }

    @cache
    def best(mask: int) -> Cost | None:
        if not mask:
            return (0,) * problem.size
        i = (mask & -mask).bit_length() - 1
        rest = mask & ~(1 << i)
        found: Cost | None = None
        others = rest
        while others:
            j = (others & -others).bit_length() - 1
            others &= others - 1
            if (i, j) in pair and (sub := best(rest & ~(1 << j))) is not None:
                total = _add(pair[i, j], sub)
                if found is None or total < found:
                    found = total
        return found

    full = (1 << n) - 1
    if n % 2 == 0:
        return best(full)
    byes = [k for k, p in enumerate(ranked) if not p.had_bye] or list(range(n))
    options = [
        _add(tuple(problem.unpaired_cost(ranked[k])), sub)
        for k in byes
        if (sub := best(full & ~(1 << k))) is not None
    ]
    return min(options, default=None)


def cost_of(players: Sequence[SwissPlayer], result: SwissRound) -> Cost:
    problem = _problem(players)
    by_id = {p.id: p for p in players}
    total: Cost = (0,) * problem.size
    for white, black in result.pairs:
        total = _add(total, tuple(problem.pair_cost(by_id[white], by_id[black])))
    if result.bye is not None:
        total = _add(total, tuple(problem.unpaired_cost(by_id[result.bye])))
    return total


def check_round(players: Sequence[SwissPlayer]) -> SwissRound | None:
    """Pair a round and check it against the oracle; None when neither can pair it."""
    expected = oracle(players)
    if expected is None:
        with pytest.raises(PairingError):
            pair_round(players)
        return None
    result = pair_round(players)
    by_id = {p.id: p for p in players}
    seated = [x for pair in result.pairs for x in pair] + [result.bye] * (result.bye is not None)
    assert sorted(map(str, seated)) == sorted(str(p.id) for p in players)
    assert (result.bye is None) == (len(players) % 2 == 0)
    for white, black in result.pairs:
        assert black not in by_id[white].opponents
    if result.bye is not None and any(not p.had_bye for p in players):
        assert not by_id[result.bye].had_bye
    assert cost_of(players, result) == expected
    # The colours handed out are the ones the cost counted.
    misses = [
        _add(swiss._misses(by_id[w], "W"), swiss._misses(by_id[b], "B")) for w, b in result.pairs
    ]
    counted = (sum(m[0] for m in misses), sum(m[1] for m in misses), sum(m[2] for m in misses))
    assert (expected[swiss.ABSOLUTE], *expected[-3:-1]) == counted
    return result


def play(state: dict[Hashable, SwissPlayer], result: SwissRound, rng: random.Random) -> None:
    for w, b in result.pairs:
        s = rng.choice([0.0, 0.5, 1.0])
        pw, pb = state[w], state[b]
        state[w] = SwissPlayer(
            w, pw.points + s, pw.rating, pw.colours + "W", pw.opponents | {b}, pw.had_bye
        )
        state[b] = SwissPlayer(
            b, pb.points + 1 - s, pb.rating, pb.colours + "B", pb.opponents | {w}, pb.had_bye
        )
    if result.bye is not None:
        p = state[result.bye]
        state[p.id] = SwissPlayer(p.id, p.points + 1, p.rating, p.colours + "-", p.opponents, True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(4, 14), rng=st.randoms(use_true_random=False))
def test_pairing_is_as_good_as_the_exhaustive_oracle(n: int, rng: random.Random) -> None:
    state: dict[Hashable, SwissPlayer] = {
        f"p{i}": SwissPlayer(f"p{i}", rating=2000 - i) for i in range(n)
    }
    for _ in range(n - 1):
        result = check_round(list(state.values()))
        if result is None:
            break
        play(state, result, rng)


def _player(
    pid: str, points: float, colours: str = "", met: str = "", had_bye: bool = False
) -> SwissPlayer:
    """A player of a hand-made field; `met` lists opponents by their one-letter ids."""
    return SwissPlayer(pid, points, 0.0, colours, frozenset(met), had_bye)


def _pairs(result: SwissRound) -> set[frozenset[Hashable]]:
    return {frozenset(pair) for pair in result.pairs}


def test_the_only_new_pairing_is_made_even_against_the_colour_rules():
    # Round 5 of six players: a has met all but f, b all but d, c all but e. a and f
    # both need black (a third white for one of them), which used to end the tournament.
    field = [
        _player("a", 3.0, "WBWW", "bcde"),
        _player("b", 3.5, "WWBB", "acef"),
        _player("c", 2.5, "WBWB", "abdf"),
        _player("d", 0.5, "BWBB", "acef"),
        _player("e", 2.0, "BWBW", "abdf"),
        _player("f", 0.5, "BBWW", "bcde"),
    ]
    result = check_round(field)
    assert result is not None
    assert _pairs(result) == {frozenset("af"), frozenset("bd"), frozenset("ce")}
    assert ("d", "b") in result.pairs  # d needs white (BB), b black (BB)


def test_players_float_rather_than_take_a_third_colour_in_a_row():
    # a and b (2 points) both need white, c and d (1 point) both need black.
    field = [
        _player("a", 2, "BB"),
        _player("b", 2, "BB"),
        _player("c", 1, "WW"),
        _player("d", 1, "WW"),
    ]
    result = pair_round(field)
    assert all(white in {"a", "b"} and black in {"c", "d"} for white, black in result.pairs)


def test_a_colour_clash_is_mended_by_swapping_within_the_bottom_half():
    # The Dutch pairs a-c and b-d would give a and c, then b and d, the same colour.
    field = [
        _player("a", 1, "BWB"),
        _player("b", 1, "WBW"),
        _player("c", 1, "BWB"),
        _player("d", 1, "WBW"),
    ]
    result = check_round(field)
    assert result is not None
    assert set(result.pairs) == {("a", "d"), ("c", "b")}


def test_the_top_half_meets_the_bottom_half_in_order():
    field = [_player(pid, 2) for pid in "abcdef"] + [_player(pid, 1) for pid in "ghij"]
    result = pair_round(field)
    assert _pairs(result) == {frozenset(p) for p in ("ad", "be", "cf", "gi", "hj")}


def test_small_score_differences_come_before_fewer_floats():
    # a-d (a difference of 2) with b-c would float only one pair; the Swiss way floats
    # a to b and c to d, one point each, the lowest of a group meeting the highest below.
    field = [_player("a", 3), _player("b", 2), _player("c", 2), _player("d", 1)]
    assert _pairs(pair_round(field)) == {frozenset("ab"), frozenset("cd")}


def test_a_float_goes_no_further_than_it_must():
    # a has met b and c, so it floats; to d, the nearest score below, not to e.
    field = [
        _player("a", 3, met="bc"),
        _player("b", 3, met="a"),
        _player("c", 3, met="a"),
        _player("d", 2),
        _player("e", 1),
        _player("f", 1),
    ]
    result = check_round(field)
    assert result is not None
    assert _pairs(result) == {frozenset("ad"), frozenset("bc"), frozenset("ef")}


def test_the_bye_moves_up_when_the_lowest_would_leave_the_rest_unpairable():
    # a has met b, c and d, so e must play a: the bye goes to d.
    field = [_player("a", 0, met="bcd"), *(_player(p, 0, met="a") for p in "bcd"), _player("e", 0)]
    result = check_round(field)
    assert result is not None
    assert result.bye == "d" and frozenset("ae") in _pairs(result)


def test_no_second_bye_while_someone_has_had_none():
    # Only a has had no bye, and b and c have met: every pairing gives a second bye.
    field = [
        _player("a", 1),
        _player("b", 1, met="c", had_bye=True),
        _player("c", 1, met="b", had_bye=True),
    ]
    assert oracle(field) is None
    with pytest.raises(PairingError):
        pair_round(field)
    everyone = [_player(p, 1, had_bye=True) for p in "abc"]
    assert pair_round(everyone).bye == "c"


@pytest.mark.parametrize("n", range(5, 15))
def test_blocks_never_give_up_while_a_pairing_exists(monkeypatch: pytest.MonkeyPatch, n: int):
    # Large fields are paired in blocks; make every field large to check that the
    # blocks widen to the whole field (and its exact matching) rather than fail.
    monkeypatch.setattr(swiss, "EXACT_FIELD", 3)
    monkeypatch.setattr(swiss, "BLOCK", 2)
    for seed in range(4):
        rng = random.Random(seed)
        state: dict[Hashable, SwissPlayer] = {
            f"p{i}": SwissPlayer(f"p{i}", rating=2000 - i) for i in range(n)
        }
        for _ in range(n - 1):
            players = list(state.values())
            if oracle(players) is None:
                with pytest.raises(PairingError):
                    pair_round(players)
                break
            result = pair_round(players)
            seated = [x for pair in result.pairs for x in pair] + [result.bye] * (n % 2)
            assert sorted(map(str, seated)) == sorted(map(str, state))
            assert all(b not in state[w].opponents for w, b in result.pairs)
            play(state, result, rng)


def test_a_large_field_is_paired_in_blocks_without_repeats_or_colour_breaks():
    rng = random.Random(5)
    state: dict[Hashable, SwissPlayer] = {
        i: SwissPlayer(i, rating=rng.gauss(1600, 200)) for i in range(151)
    }
    for _ in range(7):
        result = pair_round(list(state.values()))
        seated = [x for pair in result.pairs for x in pair] + [result.bye]
        assert Counter(seated) == Counter(state.keys())
        for w, b in result.pairs:
            assert b not in state[w].opponents
        play(state, result, rng)
    for p in state.values():
        played = p.colours.replace("-", "")
        assert abs(p.colour_difference) <= 2 and "WWW" not in played and "BBB" not in played
    assert sum(p.had_bye for p in state.values()) == 7
