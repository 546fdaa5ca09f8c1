"""Round robin (Berger tables), knockout brackets and Swiss pairing."""

from __future__ import annotations

import itertools
import random
from collections.abc import Hashable

import pytest

from pbm.tournaments.knockout import by_round_reached, first_round, next_round, seed_order
from pbm.tournaments.roundrobin import berger_rounds, round_robin
from pbm.tournaments.standings import Result, standings
from pbm.tournaments.swiss import PairingError, SwissPlayer, SwissRound, pair_round


def test_berger_tables_match_the_published_six_player_table():
    assert berger_rounds(6) == [
        [(1, 6), (2, 5), (3, 4)],
        [(6, 4), (5, 3), (1, 2)],
        [(2, 6), (3, 1), (4, 5)],
        [(6, 5), (1, 4), (2, 3)],
        [(3, 6), (4, 2), (5, 1)],
    ]


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 16])
def test_round_robin_meets_everyone_once_with_balanced_colours(n):
    players = [f"p{i}" for i in range(n)]
    rounds = round_robin(players)
    met = [frozenset((a, b)) for rnd in rounds for a, b in rnd if b is not None]
    assert sorted(met, key=sorted) == sorted(
        (frozenset(c) for c in itertools.combinations(players, 2)), key=sorted
    )
    for rnd in rounds:
        seated = [x for pair in rnd for x in pair if x is not None]
        assert sorted(seated) == sorted(players)  # everyone once a round (a bye if odd)
    whites = {p: sum(1 for rnd in rounds for a, b in rnd if a == p and b) for p in players}
    games = n - 1
    assert all(abs(2 * w - games) <= 1 for w in whites.values())


def test_double_round_robin_reverses_colours():
    rounds = round_robin(list("abcdef"), double=True)
    assert len(rounds) == 10
    first = {(a, b) for rnd in rounds[:5] for a, b in rnd}
    second = {(a, b) for rnd in rounds[5:] for a, b in rnd}
    assert second == {(b, a) for a, b in first}


def test_knockout_seeding_and_byes():
    assert seed_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    pairs = first_round([f"s{i}" for i in range(1, 7)])
    assert pairs == [("s1", None), ("s4", "s5"), ("s2", None), ("s3", "s6")]
    assert next_round(["s1", "s4", "s2", "s3"]) == [("s1", "s4"), ("s2", "s3")]
    with pytest.raises(ValueError):
        next_round(["a", "b", "c"])


def test_a_knockout_table_ranks_by_the_round_reached():
    # Five players: round 1 d beats e, byes for a, b and c; round 2 a beats d, c beats
    # b; the final c beats a.
    results = [
        Result("d", "e", 1.0),
        Result("a", None, 1.0),
        Result("b", None, 1.0),
        Result("c", None, 1.0),
        Result("a", "d", 1.0),
        Result("b", "c", 0.0),
        Result("a", "c", 0.0),
    ]
    rows = standings(["a", "b", "c", "d", "e"], results)
    reached = {"a": (3, False), "c": (3, True), "b": (2, False), "d": (2, False), "e": (1, False)}
    ranked = by_round_reached(rows, reached)
    assert [(r.player, r.rank) for r in ranked] == [
        ("c", 1), ("a", 2), ("b", 3), ("d", 3), ("e", 5)
    ]  # fmt: skip
    # The points alone tie b (a bye) with d (a win) and leave the loser of the final
    # a point short of the winner: the rounds decide the ranks.
    assert {r.player: r.points for r in ranked} == {"a": 2, "b": 1, "c": 3, "d": 1, "e": 0}


def test_standings_with_tiebreaks():
    results = [
        Result("a", "b", 1.0),
        Result("c", "d", 0.5),
        Result("a", "c", 0.0),
        Result("b", "d", 1.0),
        Result("e", None, 1.0),
    ]
    rows = {r.player: r for r in standings(list("abcde"), results)}
    assert rows["c"].points == 1.5 and rows["a"].points == 1.0
    # Buchholz of a: b has 1, c has 1.5.
    assert rows["a"].buchholz == 2.5
    # Sonneborn-Berger of a: beat b (1 point).
    assert rows["a"].sonneborn_berger == 1.0
    # c: beat a (1) + half of d (0.5 * 0.5).
    assert rows["c"].sonneborn_berger == 1.25
    assert rows["e"].byes == 1 and rows["e"].buchholz == 0
    assert standings(list("abcde"), results)[0].player == "c"


def _play_swiss(
    n: int, rounds: int, seed: int, withdraw: dict[int, list[str]] | None = None
) -> tuple[dict[Hashable, SwissPlayer], list[SwissRound]]:
    rng = random.Random(seed)
    state: dict[Hashable, SwissPlayer] = {
        f"p{i}": SwissPlayer(f"p{i}", rating=2000 - i) for i in range(n)
    }
    history: list[SwissRound] = []
    for r in range(rounds):
        for pid in (withdraw or {}).get(r, []):
            state.pop(pid)
        result = pair_round(list(state.values()))
        history.append(result)
        seen = [x for pair in result.pairs for x in pair] + ([result.bye] if result.bye else [])
        assert sorted(map(str, seen)) == sorted(map(str, state))
        for w, b in result.pairs:
            assert b not in state[w].opponents
            s = rng.choice([0.0, 0.5, 1.0])
            pw, pb = state[w], state[b]
            state[w] = SwissPlayer(
                w, pw.points + s, pw.rating, pw.colours + "W", pw.opponents | {b}, pw.had_bye
            )
            state[b] = SwissPlayer(
                b, pb.points + 1 - s, pb.rating, pb.colours + "B", pb.opponents | {w}, pb.had_bye
            )
        if result.bye:
            p = state[result.bye]
            assert not p.had_bye
            state[result.bye] = SwissPlayer(
                p.id, p.points + 1, p.rating, p.colours + "-", p.opponents, True
            )
    return state, history


@pytest.mark.parametrize("n", [4, 7, 9, 16, 33])
def test_swiss_never_repeats_and_keeps_colours_balanced(n):
    state, _ = _play_swiss(n, min(n - 1, 6), seed=n)
    for p in state.values():
        assert abs(p.colour_difference) <= 2
        assert "WWW" not in p.colours.replace("-", "") and "BBB" not in p.colours.replace("-", "")


def test_swiss_first_round_pairs_top_half_against_bottom_half():
    players = [SwissPlayer(f"p{i}", rating=100 - i) for i in range(8)]
    result = pair_round(players)
    assert {frozenset(p) for p in result.pairs} == {
        frozenset(("p0", "p4")),
        frozenset(("p1", "p5")),
        frozenset(("p2", "p6")),
        frozenset(("p3", "p7")),
    }


def test_swiss_bye_goes_to_lowest_ranked_without_a_bye():
    players = [SwissPlayer(f"p{i}", rating=100 - i) for i in range(5)]
    assert pair_round(players).bye == "p4"
    players[4] = SwissPlayer("p4", rating=96, had_bye=True)
    assert pair_round(players).bye == "p3"


def test_swiss_with_a_withdrawal():
    state, history = _play_swiss(9, 5, seed=3, withdraw={2: ["p0"]})
    assert "p0" not in state and len(history) == 5
    assert all(len(h.pairs) == 4 for h in history)


def test_swiss_raises_when_opponents_run_out():
    a = SwissPlayer("a", opponents=frozenset({"b"}))
    b = SwissPlayer("b", opponents=frozenset({"a"}))
    with pytest.raises(PairingError):
        pair_round([a, b])
