"""Hand-built tests for Quadrupel and its variants (the rule sheet, Andreas Liebl-Wachsmuth
1986, as docs/games/quadrupel.md settles it)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest

from pbm.games import find_game, get_game
from pbm.games.base import (
    IllegalMoveError,
    InvalidMoveError,
    OptionError,
    PositionError,
    UnknownGameError,
)
from pbm.games.quadrupel import GAME, ExtraTurns, Quadrupel, QuadrupelState, Rules, _code
from pbm.games.quadrupel_board import DIAGONAL, DIAMOND, SHAPES, SQUARE, STRAIGHT, ZONES
from pbm.games.quadrupel_match import match_result, next_first_player

FILES = "abcdef"


def sq(name: str) -> int:
    return (int(name[1]) - 1) * 6 + FILES.index(name[0])


def position(black: str, white: str, *, turn: str = "black", extra: str = "", **opts) -> str:
    """A position text with the given stones ('c3:4,c4:1,...')."""
    rules = Rules(**opts)
    fields = [f"variant={rules.variant}"]
    if rules.variant == "points":
        fields += [f"goal={rules.goal}"] + (
            [f"threshold={rules.threshold}"] if rules.goal == "minimum" else []
        )
    if rules.variant == "position":
        fields.append(f"zone2={rules.zone2}")
    black, white = (",".join(sorted(t.split(","), key=lambda n: sq(n[:2]))) for t in (black, white))
    fields += [f"plycap={rules.plycap}", f"black={black}", f"white={white}", f"turn={turn}"]
    fields.append("ply=10")
    if extra:
        fields.append(f"extra={extra}")
    return " ".join(fields)


def play(state: QuadrupelState, *texts: str) -> QuadrupelState:
    for text in texts:
        state = GAME.apply(state, GAME.parse_move(state, text))
    return state


def moves_text(state: QuadrupelState) -> list[str]:
    return sorted(GAME.format_move(state, m) for m in GAME.legal_moves(state))


def board_moves(state: QuadrupelState) -> list[int]:
    """The legal moves of a position past the setups: board moves (`from * 36 + to`) only."""
    moves = GAME.legal_moves(state)
    board = [m for m in moves if isinstance(m, int)]
    assert board == moves, "a setup among the moves"
    return board


# -- an independent move generator on (file, rank) pairs, to cross-check the tables -----

ALL_DIRECTIONS = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]


def _on(p: tuple[int, int]) -> bool:
    return 0 <= p[0] < 6 and 0 <= p[1] < 6


def reference_moves(own: set, occupied: set) -> set:
    result = set()
    for start in own:
        others = occupied - {start}
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            step = (start[0] + dx, start[1] + dy)
            if _on(step) and step not in others:
                result.add((start, step))
        seen, todo = {start}, [start]
        while todo:
            x, y = todo.pop()
            for dx, dy in ALL_DIRECTIONS:
                over, land = (x + dx, y + dy), (x + 2 * dx, y + 2 * dy)
                if _on(land) and over in others and land not in others and land not in seen:
                    seen.add(land)
                    todo.append(land)
        result |= {(start, land) for land in seen - {start}}
    return result


def reference_shape(stones: set) -> bool:
    xs, ys = sorted(x for x, _ in stones), sorted(y for _, y in stones)
    x0, y0 = xs[0], ys[0]
    if stones == {(x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1)}:
        return True
    if len(set(ys)) == 1 and xs == list(range(x0, x0 + 4)):
        return True
    if len(set(xs)) == 1 and ys == list(range(y0, y0 + 4)):
        return True
    by_x = sorted(stones)
    if [p[0] for p in by_x] == list(range(x0, x0 + 4)):
        steps = {by_x[i + 1][1] - by_x[i][1] for i in range(3)}
        if steps in ({1}, {-1}):
            return True
    cx, cy = sum(xs) / 4, sum(ys) / 4
    if cx.is_integer() and cy.is_integer():
        cx, cy = int(cx), int(cy)
        return stones == {(cx + 1, cy), (cx - 1, cy), (cx, cy + 1), (cx, cy - 1)}
    return False


def reference_perft(black: set, white: set, mover: int, depth: int, trail=((), ())) -> int:
    """Move sequences of `depth` plies; `trail` holds each side's last two moves, for the
    rule that a stone may not go x->y, y->x and x->y again in its owner's turns."""
    if depth == 0:
        return 1
    own = black if mover == 0 else white
    moves = reference_moves(own, black | white)
    mine = trail[mover]
    if len(mine) == 2 and mine[1] == (mine[0][1], mine[0][0]) and len(moves) > 1:
        moves.discard(mine[0])
    total = 0
    for frm, to in moves:
        moved = (own - {frm}) | {to}
        if depth == 1:
            total += 1
        elif not reference_shape(moved):  # a QUADRUPEL ends the game
            nb, nw = (moved, white) if mover == 0 else (black, moved)
            new_mine = (*mine[-1:], (frm, to))
            new_trail = (new_mine, trail[1]) if mover == 0 else (trail[0], new_mine)
            total += reference_perft(nb, nw, 1 - mover, depth - 1, new_trail)
    return total


def _pairs(state: QuadrupelState, seat: int) -> set:
    return {(s % 6, s // 6) for s in state.stones[seat]}


# -- geometry ---------------------------------------------------------------------------


def test_there_are_95_quadrupel_placements_of_four_kinds():
    assert Counter(SHAPES.values()) == {SQUARE: 25, STRAIGHT: 36, DIAGONAL: 18, DIAMOND: 16}
    for mask in SHAPES:
        stones = {(s % 6, s // 6) for s in range(36) if mask >> s & 1}
        assert reference_shape(stones)


def test_zones_are_20_edge_12_ring_4_centre():
    assert Counter(ZONES) == {1: 20, 2: 12, 3: 4}
    assert [ZONES[sq(n)] for n in ("c3", "d3", "c4", "d4", "b2", "e5", "a1", "f4")] == [
        3, 3, 3, 3, 2, 2, 1, 1,
    ]  # fmt: skip


# -- start position and moves -------------------------------------------------------------


def test_start_position_and_the_20_first_moves():
    state = GAME.new_state()
    assert GAME.to_move(state) == 0 and GAME.seats == ("Black", "White")
    assert sorted(state.stones[0]) == sorted(sq(n) for n in ("d5", "c4", "d4", "c3"))
    assert sorted(state.stones[1]) == sorted(sq(n) for n in ("c5", "b4", "e4", "d3"))
    # 20 first moves, by hand: 4 steps and 16 jumps.
    steps = ["c3-b3", "c3-c2", "d5-d6", "d5-e5"]
    jumps = ["c3-a5", "c3-e3", "c3-e5", "c4-a4", "c4-c2", "c4-c6", "c4-e2", "c4-e6", "d4-b2"]
    jumps += ["d4-b6", "d4-d2", "d4-d6", "d4-f4", "d5-b3", "d5-b5", "d5-f3"]
    assert moves_text(state) == sorted(steps + jumps)
    board = GAME.render(state)
    assert "5  . . O X . .  5" in board and "4  . O X X O .  4" in board
    assert "3  . . X O . .  3" in board


def test_move_generation_agrees_with_an_independent_generator():
    checked = 0
    for seed in range(12):
        rng = random.Random(seed)
        state = GAME.new_state()
        while GAME.to_move(state) is not None:
            seat = state.turn
            if state.banned[seat] < 0:
                expected = reference_moves(_pairs(state, seat), _pairs(state, 0) | _pairs(state, 1))
                got = {
                    ((m // 36) % 6, (m // 36) // 6, (m % 36) % 6, (m % 36) // 6)
                    for m in board_moves(state)
                }
                assert got == {(a[0], a[1], b[0], b[1]) for a, b in expected}
                checked += 1
            state = GAME.apply(state, rng.choice(GAME.legal_moves(state)))
    assert checked > 500


def test_perft_3_agrees_with_the_independent_generator():
    state = GAME.new_state()
    expected = reference_perft(_pairs(state, 0), _pairs(state, 1), 0, 3)
    assert expected == 11189
    from pbm.games.playout import perft

    assert perft(GAME, state, 3) == expected


def test_steps_are_orthogonal_only():
    state = GAME.new_state()
    with pytest.raises(IllegalMoveError, match="never diagonally"):
        GAME.parse_move(state, "c3-b2")
    assert GAME.format_move(state, GAME.parse_move(state, "c3-c2")) == "c3-c2"


def test_a_jump_goes_over_one_stone_of_either_colour_and_captures_nothing():
    state = GAME.new_state()
    after = play(state, "c4-e6")  # diagonal over Black's own d5
    assert after.cells[sq("d5")] == _code(0, 0) and after.cells[sq("e6")] == _code(0, 0)
    after = play(state, "c4-a4")  # over White's b4, which stays
    assert after.cells[sq("b4")] == _code(1, 0)


def test_no_jump_over_two_stones_in_a_row():
    # c3 - d3 - e3 in a row: Black c3 may not jump d3 and e3 to f3.
    state = GAME.load(position("c3,a6,b6,f6", "d3,e3,a1,f1"))
    assert "c3-f3" not in moves_text(state) and "c3-e3" not in moves_text(state)
    with pytest.raises(IllegalMoveError, match="cannot reach"):
        GAME.parse_move(state, "c3-f3")


def test_a_chain_of_jumps_written_in_full_is_checked_hop_by_hop():
    state = GAME.new_state()
    move = GAME.parse_move(state, "d5-b5-b3")
    assert move == GAME.parse_move(state, "d5-b3") == GAME.parse_move(state, "D5 B5 B3")
    assert GAME.format_move(state, move) == "d5-b3"
    with pytest.raises(IllegalMoveError, match="d5-c4 is not a jump"):
        GAME.parse_move(state, "d5-c4-b3")
    with pytest.raises(IllegalMoveError, match="over the empty square"):
        GAME.parse_move(state, "d5-b5-b3-b1")
    with pytest.raises(IllegalMoveError, match="lands on the occupied square"):
        GAME.parse_move(state, "c3-c5-a3")


def test_a_chain_may_pass_its_origin_but_not_end_there():
    # a1 -> c1 -> c3 -> a3 -> a1 is a loop of jumps over b1, c2, b3 and a2.
    state = GAME.load(position("a1,f6,f4,e6", "b1,c2,b3,a2"))
    legal = moves_text(state)
    assert "a1-c3" in legal and "a1-a3" in legal and "a1-a1" not in legal
    with pytest.raises(IllegalMoveError, match="may not end where it started"):
        GAME.parse_move(state, "a1-c1-c3-a3-a1")
    move = GAME.parse_move(state, "a1-c1-c3-a3-a1-c1")
    assert GAME.format_move(state, move) == "a1-c1"


def test_back_and_forth_third_traversal_is_illegal():
    state = play(GAME.new_state(), "c3-c2", "e4-f4", "c2-c3", "f4-e4")
    with pytest.raises(IllegalMoveError, match="a third time is not allowed"):
        GAME.parse_move(state, "c3-c2")
    assert "c3-c2" not in moves_text(state)
    # Another move in between clears it; White's stone is banned the same way.
    assert "e4-f4" not in moves_text(play(state, "d5-d6"))
    assert "c3-c2" in moves_text(play(state, "d5-d6", "c5-b5"))
    # The ban survives dump and load (it is recovered from the move line).
    assert GAME.load(GAME.dump(state)) == state


def _bare_state(black: list[str], white: list[str], turn: int = 0) -> QuadrupelState:
    """A board with any number of stones (not reachable in play), for the rare rules."""
    cells = [0] * 36
    for name in black:
        cells[sq(name)] = _code(0, 0)
    for name in white:
        cells[sq(name)] = _code(1, 0)
    return GAME._make(Rules(), tuple(cells), turn=turn, ply=0, pending=0, extra=None, result=None)


def test_back_and_forth_ban_is_lifted_when_it_is_the_only_move():
    # With four stones each no position with fewer than 3 moves turned up in a search, so
    # the lift is checked on a bare board: Black a1 can only step to a2.
    state = _bare_state(["a1"], ["b1", "c1", "b2", "c3"])
    only = sq("a1") * 36 + sq("a2")
    assert GAME.legal_moves(state) == [only]
    assert GAME.legal_moves(replace(state, banned=(only, -1))) == [only]


def test_a_player_without_a_legal_move_loses():
    # Unreachable with four stones each (see above); a bare board shows the rule.
    blocked = _bare_state(["a1"], ["b1", "c1", "b2", "c3", "a3", "c2"], turn=1)
    result = GAME.outcome(play(blocked, "c2-a2"))
    assert result is not None
    assert result.winner == 1 and "no legal move" in result.reason


def test_passing_is_not_allowed_and_bad_text_is_reported():
    state = GAME.new_state()
    with pytest.raises(IllegalMoveError, match="passing is not allowed"):
        GAME.parse_move(state, "pass")
    with pytest.raises(InvalidMoveError, match=r"'g7-g8'.*not a square"):
        GAME.parse_move(state, "g7-g8")
    with pytest.raises(InvalidMoveError, match="'c3'"):
        GAME.parse_move(state, "c3")
    with pytest.raises(IllegalMoveError, match="no Black stone on c5"):
        GAME.parse_move(state, "c5-c6")
    with pytest.raises(IllegalMoveError, match="d4 is occupied"):
        GAME.parse_move(state, "c4-d4")
    with pytest.raises(IllegalMoveError, match="has no setup"):
        GAME.parse_move(state, "setup c4=1 d4=2 d5=3 c3=4")
    for text in ("c3c2", "c3:c2", "C3 C2", " c3 - c2 "):
        assert GAME.format_move(state, GAME.parse_move(state, text)) == "c3-c2"


# -- winning ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("black", "move", "shape"),
    [
        ("c3,c4,d4,d6", "d6-d5", None),  # no shape: an L
        ("c3,c4,d4,e6", "e6-e5", None),
        ("c3,d3,d4,a6", "a6-a5", None),
    ],
)
def test_non_shapes_do_not_win(black, move, shape):
    state = GAME.load(position(black, "a1,b1,f1,f2"))
    after = play(state, move)
    assert GAME.outcome(after) is None


@pytest.mark.parametrize(
    ("black", "move", "shape"),
    [
        ("c3,c4,d4,d2", "d2-d3", "Square"),
        ("a2,b2,c2,d1", "d1-d2", "Straight"),
        ("b1,b2,b3,c4", "c4-b4", "Straight"),
        ("a1,b2,c3,d5", "d5-d4", "Diagonal"),
        ("a4,b3,c2,d2", "d2-d1", "Diagonal"),
        ("c2,b3,d3,c5", "c5-c4", "Diamond"),
    ],
)
def test_each_quadrupel_shape_wins_for_its_builder(black, move, shape):
    state = GAME.load(position(black, "a6,f6,f5,e6"))
    after = play(state, move)
    result = GAME.outcome(after)
    assert result is not None
    assert result.winner == 0 and shape in result.reason and GAME.to_move(after) is None
    assert f"QUADRUPEL: {shape}" in GAME.describe_move(state, GAME.parse_move(state, move))
    assert GAME.legal_moves(after) == []


def test_a_diamond_may_hold_an_enemy_stone_in_its_centre():
    state = GAME.load(position("c2,b3,d3,c5", "c3,a6,e6,f1"))
    assert GAME.outcome(state) is None
    result = GAME.outcome(play(state, "c5-c4"))
    assert result is not None
    assert result.winner == 0 and "Diamond" in result.reason


def test_only_the_position_after_the_move_counts():
    # Black's chain a1-c3-e5 passes c3, where a Square would be, and ends off it.
    state = GAME.load(position("a1,b4,c4,b3", "b2,d4,f6,f1"))
    after = play(state, "a1-c3-e5")
    assert GAME.outcome(after) is None
    result = GAME.outcome(play(state, "a1-c3"))
    assert result is not None and result.winner == 0


# -- pbm's draw rules ---------------------------------------------------------------------------


def test_third_repetition_is_a_draw():
    state = GAME.new_state()
    state = play(state, "d5-d6", "c5-b5", "d6-d5", "b5-c5")  # start position, second time
    assert GAME.outcome(state) is None
    state = play(state, "c3-c2", "e4-f4", "c2-c3")
    assert GAME.outcome(state) is None
    state = play(state, "f4-e4")  # third time, Black to move
    result = GAME.outcome(state)
    assert result is not None
    assert result.winner is None and "third time" in result.reason
    assert GAME.load(GAME.dump(state)) == state


def test_ply_cap_draws_and_is_an_option():
    state = GAME.new_state(plycap=20)
    rng = random.Random(3)
    while GAME.to_move(state) is not None:
        state = GAME.apply(state, rng.choice(GAME.legal_moves(state)))
    assert state.ply == 20  # this seeded game makes no QUADRUPEL
    result = GAME.outcome(state)
    assert result is not None
    assert result.winner is None and "ply cap of 20" in result.reason
    # One move before the cap the game runs; the next board move ends it.
    before = GAME.load(GAME.dump(state).replace("ply=20", "ply=19").split(" line=")[0])
    assert GAME.outcome(before) is None
    result = GAME.outcome(play(before, "e6-d6"))
    assert result is not None and "ply cap" in result.reason
    with pytest.raises(OptionError):
        GAME.new_state(plycap=5)
    assert GAME.new_state().rules.plycap == 400


# -- options and names --------------------------------------------------------------------------


def test_options_variants_and_names():
    assert get_game("Quadrupel") is GAME
    assert GAME.new_state(variant="Added-Value").rules.variant == "added"
    assert GAME.new_state(variant="combo").rules.variant == "combination"
    assert GAME.new_state(variant="points", goal="max").rules.goal == "maximum"
    with pytest.raises(OptionError, match="does not apply"):
        GAME.new_state(variant="basic", threshold=25)
    with pytest.raises(OptionError, match="does not apply"):
        GAME.new_state(variant="points", goal="maximum", threshold=25)
    with pytest.raises(OptionError, match="does not apply"):
        GAME.new_state(variant="added", zone2="ban")
    with pytest.raises(OptionError):
        GAME.new_state(variant="points", threshold=31)
    with pytest.raises(OptionError):
        GAME.new_state(variant="chess")
    assert find_game("Quadrupel-Added") == (GAME, {"variant": "added"})
    assert find_game("quadrupel zone2 ban") == (GAME, {"variant": "position", "zone2": "ban"})
    with pytest.raises(UnknownGameError):
        find_game("quadrupel-nothing")
    # Every option spelled out, the unnamed ones at the rule sheet's defaults (threshold
    # 20, the minimum-points goal, Zone 2 placing, the 400-ply cap).
    defaults = {
        "variant": "basic",
        "goal": "minimum",
        "threshold": 20,
        "zone2": "placement",
        "plycap": 400,
    }
    for name, options in Quadrupel.variant_aliases.items():
        state = GAME.new_state(**options)
        assert GAME.state_options(state) == defaults | options, name
        assert GAME.new_state(**GAME.state_options(state)) == state


# -- added value game -------------------------------------------------------------------------


def _added_after_first(shape_move: tuple[str, str, str]) -> QuadrupelState:
    black, white, move = shape_move
    return play(GAME.load(position(black, white, turn="white", variant="added")), move)


FIRST = {  # White completes this shape with the move given; Black's stones are elsewhere.
    "Square": ("a6,b6,f6,f5", "c3,c4,d4,d2", "d2-d3"),
    "Straight": ("a6,b6,f6,f5", "a1,b1,c1,d2", "d2-d1"),
    "Diamond": ("a6,b6,f6,f5", "c2,b3,d3,c5", "c5-c4"),
    "Diagonal": ("a6,b6,f6,f4", "a1,b2,c3,d5", "d5-d4"),
}


@pytest.mark.parametrize(
    ("shape", "code", "turns"),
    [("Square", SQUARE, 3), ("Straight", STRAIGHT, 2), ("Diamond", DIAMOND, 1)],
)
def test_added_first_quadrupel_freezes_the_builder(shape, code, turns):
    state = _added_after_first(FIRST[shape])
    assert GAME.outcome(state) is None and GAME.to_move(state) == 0
    # White built it, worth the shape's value (1 to 3) and no points.
    assert state.extra == ExtraTurns(1, code, 0, code, 0, turns)
    board = GAME.render(state)
    assert "White completed a" in board and "is frozen" in board
    assert f"{turns} extra turn" in board
    # The builder's stones never move: Black moves again and again.
    assert all(m // 36 in state.stones[0] for m in board_moves(state))
    assert GAME.load(GAME.dump(state)) == state


def test_added_first_diagonal_wins_at_once():
    state = _added_after_first(FIRST["Diagonal"])
    result = GAME.outcome(state)
    assert result is not None
    assert result.winner == 1 and result.scores == (0, 4) and "cannot be beaten" in result.reason


def _chase(first: str, black: str, moves: list[str]) -> QuadrupelState:
    """White builds `first`; Black, with stones `black`, plays `moves` as extra turns."""
    _, white, move = FIRST[first]
    state = GAME.load(position(black, white, turn="white", variant="added"))
    return play(state, move, *moves)


# Every cell of the rule sheet's table (part 2), as (first, Black's stones, extra moves,
# expected result): the chaser's last move completes the named shape on that extra turn.
TABLE = [
    # Diamond first (1 extra turn): Diagonal = draw.
    ("Diamond", "c6,d5,e4,f2", ["f2-f3"], None, "Diagonal"),
    # Straight first (2 extra turns): 1 turn Diagonal wins, Diamond draws; 2 turns Diagonal draws.
    ("Straight", "c6,d5,e4,f2", ["f2-f3"], 0, "Diagonal"),
    ("Straight", "d5,c4,e4,e3", ["e3-d3"], None, "Diamond"),
    ("Straight", "c6,d5,e4,f1", ["f1-f2", "f2-f3"], None, "Diagonal"),
    # Square first (3 extra turns).
    ("Square", "c6,d5,e4,f2", ["f2-f3"], 0, "Diagonal"),  # winner
    ("Square", "b6,a5,c5,a4", ["a4-b4"], 0, "Diamond"),  # winner
    ("Square", "a5,b5,c5,d6", ["d6-d5"], None, "Straight"),  # draw
    ("Square", "c6,d5,e4,f1", ["f1-f2", "f2-f3"], 0, "Diagonal"),  # winner
    ("Square", "b6,a5,c5,a3", ["a3-a4", "a4-b4"], None, "Diamond"),  # draw
    ("Square", "c6,d5,e4,e1", ["e1-f1", "f1-f2", "f2-f3"], None, "Diagonal"),  # draw
]


@pytest.mark.parametrize(("first", "black", "moves", "winner", "second"), TABLE)
def test_added_value_table_cell_by_cell(first, black, moves, winner, second):
    state = _chase(first, black, moves)
    result = GAME.outcome(state)
    assert result is not None and second in result.reason
    assert result.winner == winner, result.reason
    if winner is None:
        assert result.scores is not None and result.scores[0] == result.scores[1]


def test_added_lower_second_quadrupel_loses_and_no_quadrupel_loses():
    # Square first: no QUADRUPEL in the three extra turns, and the builder wins.
    state = _chase("Square", "a6,b6,f6,f5", ["a6-a5", "a5-a4"])
    assert GAME.outcome(state) is None
    result = GAME.outcome(play(state, "a4-a3"))
    assert result is not None
    assert result.winner == 1 and "completed no QUADRUPEL in 3 extra turns" in result.reason
    assert result.scores == (0, 1)
    # Square first; a Square in 1 extra turn is worth 1 - 1 = 0 < 1.
    state = _chase("Square", "a4,b4,b5,a6", ["a6-a5"])
    result = GAME.outcome(state)
    assert result is not None
    assert result.winner == 1 and "less than" in result.reason and result.scores == (0, 1)
    # Diamond first: a Diamond in the one extra turn scores 3 - 1 = 2 < 3.
    state = _chase("Diamond", "e6,d5,f5,f4", ["f4-e4"])
    result = GAME.outcome(state)
    assert result is not None
    assert result.winner == 1 and result.scores == (2, 3)


# -- point game --------------------------------------------------------------------------------


def test_rule_sheet_point_example_diamond_scores_21():
    # White d3=4, c2=2, e2=1, d1=3 around d2 (Black stone at d2); White builds it with e3-e2.
    state = GAME.load(position("b4:1,b3:2,c3:3,d2:4", "d3:4,c2:2,e3:1,d1:3", turn="white",
                               variant="points"))  # fmt: skip
    after = play(state, "e3-e2")
    result = GAME.outcome(after)
    assert result is not None
    assert result.winner == 1 and "worth 21 points" in result.reason and result.scores == (0, 21)


def test_point_bounds_30_and_10():
    state = GAME.load(position("c3:1,c4:2,d4:3,d2:4", "a1:1,a2:2,b1:3,f1:4", variant="points",
                               threshold=30))  # fmt: skip
    result = GAME.outcome(play(state, "d2-d3"))
    assert result is not None
    assert result.winner == 0 and "30 points" in result.reason
    state = GAME.load(position("a1:1,b1:2,c1:3,d2:4", "c3:1,c4:2,d4:3,f6:4", variant="points",
                               threshold=10))  # fmt: skip
    result = GAME.outcome(play(state, "d2-d1"))
    assert result is not None
    assert result.winner == 0 and "10 points" in result.reason


def test_point_minimum_below_threshold_loses():
    black = "c3:1,c4:2,d4:3,d2:4"
    state = GAME.load(position(black, "a1:1,a2:2,b1:3,f1:4", variant="points"))
    result = GAME.outcome(play(state, "d2-d3"))
    assert result is not None
    assert result.winner == 0 and result.scores == (30, 0)
    low = GAME.load(position("a1:1,b1:2,c1:3,d2:4", "c3:1,c4:2,d4:3,f6:4", variant="points"))
    result = GAME.outcome(play(low, "d2-d1"))
    assert result is not None
    assert result.winner == 1 and "below 20" in result.reason and result.scores == (10, 0)


def test_point_maximum_scores_the_builder_and_the_match_helper():
    state = GAME.load(position("a1:1,b1:2,c1:3,d2:4", "c3:1,c4:2,d4:3,f6:4", variant="points",
                               goal="maximum"))  # fmt: skip
    result = GAME.outcome(play(state, "d2-d1"))
    assert result is not None
    assert result.winner == 0 and result.scores == (10, 0)
    assert match_result([(10, 0)]) is None
    assert match_result([(10, 0), (0, 12)]) == 1
    assert match_result([(10, 0), (0, 10)]) is None  # tie: a third game
    assert match_result([(10, 0), (0, 10), (0, 21)]) == 1
    assert match_result([(10, 0), (0, 10), (0, 0)]) is None
    assert next_first_player((10, 0), last_first=0) == 1  # the loser begins
    assert next_first_player((0, 10), last_first=0) == 0
    assert next_first_player((0, 0), last_first=0) == 1


def test_setup_is_a_move_and_stays_secret_until_both_are_in():
    state = GAME.new_state(variant="points")
    assert len(GAME.legal_moves(state)) == 24
    with pytest.raises(IllegalMoveError, match="must first set up"):
        GAME.parse_move(state, "c3-c2")
    with pytest.raises(IllegalMoveError, match="1, 2, 3 and 4"):
        GAME.parse_move(state, "setup c4=1 d4=1 d5=3 c3=4")
    with pytest.raises(IllegalMoveError, match="not a start square"):
        GAME.parse_move(state, "setup c5=1 d4=2 d5=3 c3=4")
    with pytest.raises(IllegalMoveError, match="given twice"):
        GAME.parse_move(state, "setup c4=1 c4=2 d5=3 c3=4")
    with pytest.raises(InvalidMoveError, match="write a setup"):
        GAME.parse_move(state, "setup c4 d4")
    move = GAME.parse_move(state, "setup c4=1 d4=2 d5=3 c3=4")
    assert GAME.format_move(state, move) == "setup c3=4 c4=1 d4=2 d5=3"
    assert "secret" in GAME.describe_move(state, move)
    state = GAME.apply(state, move)
    assert GAME.to_move(state) == 1
    assert "X1" in GAME.render(state, 0) and "X1" not in GAME.render(state, 1)
    assert "X1" not in GAME.render(state) and "X-" in GAME.render(state, 1)
    with pytest.raises(IllegalMoveError, match="not a start square"):
        GAME.parse_move(state, "setup c4=1 d4=2 d5=3 c3=4")
    move = GAME.parse_move(state, "setup c5=4 b4=3 e4=2 d3=1")
    assert "Black c3=4 c4=1 d4=2 d5=3; White d3=1 b4=3 e4=2 c5=4" in GAME.describe_move(state, move)
    state = GAME.apply(state, move)
    assert GAME.to_move(state) == 0
    for seat in (None, 0, 1):
        board = GAME.render(state, seat)
        assert "X1" in board and "O4" in board and "zones" in board
    with pytest.raises(IllegalMoveError, match="already set up"):
        GAME.parse_move(state, "setup c4=1 d4=2 d5=3 c3=4")


# -- position game -------------------------------------------------------------------------------


def test_position_setup_marks_two_stones():
    state = GAME.new_state(variant="position")
    assert len(GAME.legal_moves(state)) == 6
    with pytest.raises(IllegalMoveError, match="exactly two"):
        GAME.parse_move(state, "setup c4=1")
    move = GAME.parse_move(state, "setup c4=1 d4=1 d5=? c3=0")
    assert GAME.format_move(state, move) == "setup c4=1 d4=1"
    state = play(state, "setup c4=1 d4=1", "setup b4=1 c5=1")
    board = GAME.render(state, 1)
    assert "X1" in board and "X?" in board and "O1" in board and "O?" in board


@pytest.mark.parametrize(
    ("zone2", "black", "move", "winner"),
    [
        # Square b2 c2 b3 c3: b2, c2, b3 are zone 2, c3 is zone 3.
        ("placement", "b2:1,c2:1,b3,c4", "c4-c3", 0),
        ("placement", "b2:1,c2,b3,c4:1", "c4-c3", 1),  # one 1-stone ends on zone 3
        ("ban", "b2,c2:1,b3,c4:1", "c4-c3", 1),  # c2 is zone 2
        # Square a1 b1 a2 b2: b2 is zone 2, the rest zone 1.
        ("ban", "a1:1,b1:1,a2,c2", "c2-b2", 0),  # the blank ends on b2
        ("ban", "a1,b1:1,a2,c2:1", "c2-b2", 1),  # a 1-stone ends on b2
    ],
)
def test_position_game_zone2_placement_and_ban(zone2, black, move, winner):
    state = GAME.load(position(black, "f6:1,f5:1,e6,d6", variant="position", zone2=zone2))
    result = GAME.outcome(play(state, move))
    assert result is not None and result.winner == winner, result


# -- combination game ----------------------------------------------------------------------------


def test_rule_sheet_combination_example_straight_scores_48():
    # White d5=4, d4=1, d3=3, d2=2: a vertical Straight, 24 points x 2 = 48; built by c2-d2.
    state = GAME.load(position("b3:1,c3:2,e3:3,f6:4", "d5:4,d4:1,d3:3,c2:2", turn="white",
                               variant="combination"))  # fmt: skip
    after = play(state, "c2-d2")
    assert after.extra == ExtraTurns(1, STRAIGHT, 24, 48, 0, 2)
    assert "2 x 24 = 48" in GAME.render(after)
    echo = GAME.describe_move(state, GAME.parse_move(state, "c2-d2"))
    assert echo == "c2-d2 QUADRUPEL: Straight, 24 points; White is frozen, Black has 2 extra turns"


def test_combination_penalty_comes_off_the_shape_factor():
    # White Square worth 1 x 15; Black builds the same kind one turn later, worth (1-1) = 0
    # ... but a Straight in one extra turn is worth (2 - 1) x points.
    white = "b4:4,c4:2,b5:3,d5:1"  # Square b4 c4 b5 c5 after d5-c5: 8+6+6+... see below
    state = GAME.load(position("a1:1,b1:2,c1:3,d2:4", white, turn="white",
                               variant="combination"))  # fmt: skip
    state = play(state, "d5-c5")
    ex = state.extra
    points = 4 * 2 + 2 * 3 + 3 * 2 + 1 * 2
    assert ex is not None and ex.shape == SQUARE and ex.points == points == 22
    assert ex.value == 22 and ex.limit == 3
    result = GAME.outcome(play(state, "d2-d1"))  # Straight on the edge: 10 points
    assert result is not None
    assert result.winner == 1 and result.scores == (10, 22) and "(2 - 1) x 10 = 10" in result.reason


def test_combination_extra_turn_limit():
    # A Diagonal worth 4 x 25 = 100 leaves no extra turn ((4-1) x 30 = 90 < 100).
    white = "a1:1,b2:2,c3:4,e4:3"
    state = GAME.load(position("a6:1,b6:2,f1:3,f2:4", white, turn="white",
                               variant="combination"))  # fmt: skip
    result = GAME.outcome(play(state, "e4-d4"))
    assert result is not None
    assert result.winner == 1 and result.scores == (0, 4 * (1 + 4 + 12 + 9))


# -- dump / load -----------------------------------------------------------------------------------


def test_dump_and_load_of_hand_positions():
    text = position("c3:4,c4:1,d4:2,d5:3", "d3:1,b4:3,e4:2,c5:4", variant="combination")
    state = GAME.load(text)
    assert GAME.dump(state) == text
    extra = position("a6,b6,f6,f5", "c3,c4,d4,d3", extra="white,square,0,1,1,3", variant="added")
    state = GAME.load(extra)
    assert GAME.dump(state) == extra and GAME.to_move(state) == 0
    assert state.extra is not None and state.extra.used == 1
    for bad in (
        "variant=basic",
        position("c3,c4,d4", "d3,b4,e4,c5"),
        position("c3,c4,d4,d4", "d3,b4,e4,c5"),
        position("c3:1,c4,d4,d5", "d3,b4,e4,c5"),
        position("c3,c4,d4,d5", "d3,b4,e4,c5") + " line=c3",
        position("c3,c4,d4,d5", "d3,b4,e4,c5") + " colour=red",
        position("c3,c4,d4,d5", "d3,b4,e4,c5", extra="white,square,0,1,1,3"),
        position("c3,c4,d4,d5", "d3,b4,e4,c5", variant="points"),
    ):
        with pytest.raises(PositionError):
            GAME.load(bad)


def test_render_during_extra_turns_names_the_frozen_side():
    state = _added_after_first(FIRST["Straight"])
    board = GAME.render(state, 0)
    assert "White completed a Straight (2) and is frozen; Black has 2 extra" in board
    assert max(len(line) for line in board.splitlines()) <= 72
    state = play(state, "f5-e5")
    assert "Black has 1 extra turn\nleft" in GAME.render(state)


def test_extra_turns_are_played_out_past_the_ply_cap():
    text = position("a6,b6,f6,f5", "c3,c4,d4,d3", extra="white,square,0,1,0,3", variant="added")
    state = GAME.load(text.replace("plycap=400", "plycap=20").replace("ply=10", "ply=30"))
    state = play(state, "a6-a5")
    assert GAME.outcome(state) is None
    assert state.extra is not None and state.extra.used == 1


def test_find_game_resolves_variant_names_and_setups_stay_hidden_in_move_lists():
    from pbm.games import find_game, get_game

    game, options = find_game("Quadrupel-Added")
    assert game is get_game("quadrupel") and options == {"variant": "added"}
    assert find_game("quadruple") == (game, {})
    state = game.new_state(variant="points")
    setup = game.parse_move(state, "setup c4=1 d4=2 d5=3 c3=4")
    after = game.apply(state, setup)
    assert game.move_visible(after, setup, 0, 0)
    assert not game.move_visible(after, setup, 0, 1)
    assert not game.move_visible(after, setup, 0, None)
    white = game.legal_moves(after)[0]
    both = game.apply(after, white)
    assert game.move_visible(both, setup, 0, 1) and game.move_visible(both, white, 1, 0)
