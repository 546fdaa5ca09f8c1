"""Quadrature (pbmserv's help page and Steere's 2006 rules, as docs/games/quadrature.md
settles them): every diagram of the help page, every rule sentence,
the options, the notation and the position text, and a slow brute-force reference of
the rules that the fast bitboard engine must agree with on random games."""

from __future__ import annotations

import random

import pytest

from pbm.games import get_game
from pbm.games import quadrature_board as qb
from pbm.games.base import IllegalMoveError, InvalidMoveError, OptionError, PositionError
from pbm.games.playout import perft

GAME = get_game("quadrature")
FILES = "abcdefghijk"

START_DIAGRAM = """
. . . . , , , . . . .
. . . . . . . . . . .
. O O O O O O O O O .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. # # # # # # # # # .
. . . . . . . . . . .
. . . . , , , . . . .
"""


# -- building positions from the help page's diagrams -------------------------------


def rows_of(diagram: str) -> list[str]:
    return [line.split("|")[0].replace(" ", "") for line in diagram.strip().splitlines()]


def board_text(diagram: str) -> str:
    """The dump's board from an 11x11 diagram drawn as on the help page ('.' ',' 'O' '#')."""
    rows = rows_of(diagram)
    assert len(rows) == 11 and all(len(r) == 11 for r in rows), rows
    return "/".join(rows)


def load(diagram: str, side: str = "b", markers: tuple[int, int] = (0, 0), rep: str = "threefold"):
    return GAME.load(f"{board_text(diagram)} {side} {markers[0]} {markers[1]} {rep}")


# The help page's 6x6 fragments sit on files c-h, ranks 9 (their top row) down to 4, Black
# still moving up. Four men of each side on the edges (a, b, j, k of ranks 1 and 11)
# keep both armies above two men; they share no file with the fragment and, lying on
# one rank, never make a square.
PADDED = """
O O . . . . . . . O O
. . . . . . . . . . .
. . {0} . . .
. . {1} . . .
. . {2} . . .
. . {3} . . .
. . {4} . . .
. . {5} . . .
. . . . . . . . . . .
. . . . . . . . . . .
# # . . . . . . . # #
"""


def embed(fragment: str) -> str:
    rows = rows_of(fragment)
    assert len(rows) == 6 and all(len(r) == 6 for r in rows), rows
    return PADDED.format(*(" ".join(r) for r in rows))


def frag(fragment: str, side: str = "b", markers: tuple[int, int] = (0, 0)):
    return load(embed(fragment), side, markers)


def columns(block: str, step: int = 16) -> list[str]:
    """Split a help-page line of side-by-side 6x6 diagrams (`step` columns apart)."""
    lines = block.strip("\n").splitlines()
    out = []
    for start in range(0, max(len(line) for line in lines), step):
        part = [line[start : start + 11] for line in lines]
        if all(p.strip() for p in part):
            out.append("\n".join(part))
    return out


def same_board(state, diagram: str) -> bool:
    return GAME.dump(state).split()[0] == GAME.dump(load(diagram)).split()[0]


def play(state, *texts: str):
    for text in texts:
        state = GAME.apply(state, GAME.parse_move(state, text))
    return state


def names(mask: int) -> set[str]:
    return {f"{FILES[i % 12]}{i // 12 + 1}" for i in qb.bits(mask)}


# -- the start and the basic move ----------------------------------------------------


def test_start_position_matches_the_help_page_and_black_moves_first():
    state = GAME.new_state()
    assert same_board(state, START_DIAGRAM)
    assert GAME.to_move(state) == 0 and GAME.seats == ("Black", "White")
    assert qb.count(state.black) == qb.count(state.white) == 9  # 7 of 16 in reserve
    assert GAME.dump(state) == "11/11/1OOOOOOOOO1/11/11/11/11/11/1#########1/11/11 b 0 0 threefold"


def test_first_moves_are_forward_diagonal_and_the_two_edge_sideways_steps():
    state = GAME.new_state()
    moves = {GAME.format_move(state, m) for m in GAME.legal_moves(state)}
    assert len(moves) == 29
    assert {"c3-c4", "c3-b4", "c3-d4", "b3-a3", "j3-k3", "b3-a4", "j3-k4"} <= moves
    assert "c3-c2" not in moves and "c3-b2" not in moves  # never backwards


def test_whites_diagonal_move_from_the_help_page():
    after = """
    . . . . , , , . . . .
    . . . . . . . . . . .
    . O O O O O O O . O .
    . . . . . . . . . O .
    . . . . . . . . . . .
    . . . . . . . . . . .
    . . . . . . . . . . .
    . . . . . . . . . . .
    . # # # # # # # # # .
    . . . . . . . . . . .
    . . . . , , , . . . .
    """
    state = load(START_DIAGRAM, side="w")
    state = play(state, "i9-j8")
    assert same_board(state, after)
    assert GAME.to_move(state) == 0


# -- squaring -------------------------------------------------------------------------

SINGLE = """
. . . . . .     . . . . . .     . . . . . .
. O . . # .     . O . . # .     . # . . # .
. . . . . .     . . . . . .     . . . . . .
. # . . . .     . # . . # .     . # . . # .
. . . # . .     . . . . . .     . . . . . .
. . . . . .     . . . . . .     . . . . . .
"""


def test_single_square_converts_the_white_man():
    before, _, after = columns(SINGLE)
    state = frag(before)
    move = GAME.parse_move(state, "f5-g6")
    assert GAME.describe_move(state, move) == "f5-g6 converts d8"
    state = GAME.apply(state, move)
    assert same_board(state, embed(after))
    assert qb.count(state.black) == 8 and qb.count(state.white) == 4  # pads included


DOUBLE = """
. . . . . .     . . . . . .     . . . . . .
. O . . . O     . O . # . O     . # . # . #
. . . # . .     . . . . . .     . . . . . .
. . . . . .     . . . . . .     . . . . . .
. # . # . #     . # . # . #     . # . # . #
. . . . . .     . . . . . .     . . . . . .
"""


def test_double_square_converts_two_men_at_once():
    before, _, after = columns(DOUBLE)
    state = frag(before)
    move = GAME.parse_move(state, "f7-f8")
    assert GAME.describe_move(state, move) == "f7-f8 converts d8 h8"
    assert same_board(GAME.apply(state, move), embed(after))


CHAIN = """
# . # . . .     # . # . . .     # . # . . .     # . # . . .
. . . . . .     . . . . . .     . . . . . .     . . . . . .
O . O . . .     O . O . . #     O . # . . #     # . # . . #
. . . . # .     . . . . . .     . . . . . .     . . . . . .
. . # . . #     . . # . . #     . . # . . #     . . # . . #
. . . . . .     . . . . . .     . . . . . .     . . . . . .
"""


def test_chain_reaction_converts_the_second_man_through_the_first():
    before, _, middle, after = columns(CHAIN)
    state = frag(before)
    move = GAME.parse_move(state, "g6-h7")
    assert GAME.describe_move(state, move) == "g6-h7 converts e7 c7"
    assert same_board(GAME.apply(state, move), embed(after))
    # The middle diagram is the first link: e7 alone is squared by the moved man.
    own, enemy = state.black ^ qb.bit(6, 5) ^ qb.bit(7, 6), state.white
    assert names(qb.squared_by(own, enemy, 7 + 6 * 12)) == {"e7"}
    first_link = load(embed(middle))
    assert first_link.black == own | qb.bit(4, 6) and first_link.white == enemy ^ qb.bit(4, 6)


SHAPES = """
. . . . . .     . . . . . .     . . . . . .     . . . . . .
. . . . . .     . . # . # .     # . . . O .     . . . . . .
O . . . . #     . . . . . .     . . . . . .     . . # # . .
# . . . . #     . . . . . .     . . . . . .     . . # O . .
. . . . . .     . . O . # .     . . . . . .     . . . . . .
. . . . . .     . . . . . .     # . . . # .     . . . . . .
"""


@pytest.mark.parametrize("index", range(4))
def test_any_axis_parallel_rectangle_is_a_square(index: int):
    state = frag(columns(SHAPES)[index])
    black = state.black & ~(qb.RANK[0] | qb.RANK[10])  # the fragment's men, not the pads
    white = state.white & ~(qb.RANK[0] | qb.RANK[10])
    assert qb.count(black) == 3 and qb.count(white) == 1
    for corner in qb.bits(black):
        assert qb.squared_by(state.black, state.white, corner) == white


def test_a_tilted_square_does_not_count():
    # d5, f5 (Black) and e6 (Black), e4 (White) form a diamond, not a rectangle.
    state = frag(
        """
        . . . . . .
        . . . . . .
        . . . . . .
        . . # . . .
        . # . # . .
        . . O . . .
        """
    )
    for corner in qb.bits(state.black):
        assert qb.squared_by(state.black, state.white, corner) == 0


# -- no suicide, adding onto squared points, squares formed this turn -------------------

SUICIDE = """
. O . O . .     . O . O . .
. . . . . .     . . . . . .
. O . . . .     . O . # . .
. . # . . .     . . . . . .
. # . # . .     . # . # . .
. . . . . .     . . . . . .
"""


def test_moving_onto_the_corner_of_an_enemy_square_is_illegal_even_if_it_would_convert():
    before, _ = columns(SUICIDE)
    state = frag(before)
    with pytest.raises(IllegalMoveError, match="suicide") as info:
        GAME.parse_move(state, "e6-f7")
    assert "'e6-f7'" in str(info.value)
    # The same point would square the white man on d7 with d5 and f5: still illegal.
    moved = state.black ^ qb.bit(4, 5) ^ qb.bit(5, 6)
    assert names(qb.squared_by(moved, state.white, 5 + 6 * 12)) == {"d7"}
    assert "e6-d7" not in {GAME.format_move(state, m) for m in GAME.legal_moves(state)}
    assert "e6-e7" in {GAME.format_move(state, m) for m in GAME.legal_moves(state)}


ADDED = """
O . O . O .     O . O . O .     O . O . O .
. . . . . .     . . . . . .     . . . . . .
O . O . . .     O . O . . #     O . # . . #
. . . . # .     . . . . . .     . . . . . .
. . # . . #     . . # . . #     . . # . . #
. . . . . .     . . . . . .     . . . . . .
"""


def test_a_converted_man_may_stand_on_a_point_the_enemy_squares():
    before, _, after = columns(ADDED)
    state = frag(before)
    move = GAME.parse_move(state, "g6-h7")
    assert GAME.describe_move(state, move) == "g6-h7 converts e7"
    state = GAME.apply(state, move)
    assert same_board(state, embed(after))
    # e7 is the fourth corner of White's c9 e9 c7 rectangle, and stays Black.
    assert qb.bit(4, 6) & qb.danger(state.white)


NOT_THIS_TURN = """
O . O . O .     O . O . . O     O . O . . O     O . O . . O
. . . . . .     . . . . . .     . . . . . .     . . . . . .
O . # . . #     O . # . . #     O . # . . O     O . O . . O
. . . . . .     . . . . . .     . . . . . .     . . . . . .
. . # . . #     . . # . . #     . . # . . #     . . # . . #
. . . . . .     . . . . . .     . . . . . .     . . . . . .
"""


def test_a_square_not_formed_this_turn_converts_nothing():
    before = columns(NOT_THIS_TURN)[0]
    state = frag(before, side="w")
    # e7 is squared by c9 e9 c7, but a move of another man leaves it Black.
    state = play(state, "a11-a10")
    assert state.black & qb.bit(4, 6)


def test_whites_sideways_chain_converts_both_black_men():
    before, _, _, after = columns(NOT_THIS_TURN)
    state = frag(before, side="w")
    move = GAME.parse_move(state, "g9-h9")
    assert GAME.describe_move(state, move) == "g9-h9 converts h7 e7"
    state = GAME.apply(state, move)
    assert same_board(state, embed(after))
    assert state.markers == (0, 0)  # an aggressive sideways move leaves the marker off


# -- the marker ---------------------------------------------------------------------

MARKER_ONE = """
. . . . . .       . . . . . .
. . . . . .       . . . . . .
. O . O . .       . O . O . .
. . . . . .       . . . . . .
. # . # . .       . # . . # .
. . . . . . |0|   . . . . . . |1|
"""

MARKER_SEQUENCE = """
. . . . . . |0|   . . . . . . |0|   . . . . . . |1|   . . . . . . |1|
. . . . . .       . . . . . .       . . . . . .       . . . . . .
. O . O . .       . O . O . .       . O . . O .       . O . . O .
. . . . . .       . . . . . .       . . . . . .       . . . . . .
. # . # . .       . # . . # .       . # . . # .       . # . . . #
. . . . . . |0|   . . . . . . |1|   . . . . . . |1|   . . . . . . |2|
"""

MARKER_CLEARED = """
. . . . . . |1|   . . . . . . |1|
. . . . . .       . . . . . .
. O . . O .       . O . . O .
. . . . . .       . . . . . #
. # . . # .       . # . . . .
. . . . . . |1|   . . . . . . |0|
"""


def marker_columns(block: str) -> list[str]:
    return columns(block, step=18)


def test_a_non_aggressive_sideways_move_shows_one_dot():
    before, after = marker_columns(MARKER_ONE)
    state = play(frag(before), "f5-g5")
    assert same_board(state, embed(after))
    assert state.markers == (1, 0)


def test_marker_sequence_and_forced_engagement_after_two_dots():
    first, *later = marker_columns(MARKER_SEQUENCE)
    state = frag(first)
    expected_markers = [(1, 0), (1, 1), (2, 1)]
    steps = ("f5-g5", "f7-g7", "g5-h5")
    for text, diagram, markers in zip(steps, later, expected_markers, strict=True):
        state = play(state, text)
        assert same_board(state, embed(diagram))
        assert state.markers == markers
    state = play(state, "a11-a10")  # White's turn passes elsewhere; Black is at 2 dots
    texts = {GAME.format_move(state, m) for m in GAME.legal_moves(state)}
    assert "h5-i5" not in texts and "d5-c5" not in texts  # no third sideways move
    assert "h5-h6" in texts and "h5-i6" in texts
    with pytest.raises(IllegalMoveError, match="sideways"):
        GAME.parse_move(state, "h5-i5")


def test_an_aggressive_sideways_move_is_allowed_at_two_dots_and_clears_the_marker():
    state = frag(
        """
        . . . . . .
        . O . . . #
        . . . . . .
        . # . . # .
        . . . . . .
        . . . . . .
        """,
        markers=(2, 1),
    )
    texts = {GAME.format_move(state, m) for m in GAME.legal_moves(state)}
    assert "h8-g8" in texts  # squares d8 with d6 and g6
    assert "d6-c6" not in texts and "g6-f6" not in texts  # sideways, converting nothing
    with pytest.raises(IllegalMoveError, match="two non-aggressive sideways"):
        GAME.parse_move(state, "d6-c6")
    move = GAME.parse_move(state, "h8-g8")
    assert GAME.describe_move(state, move) == "h8-g8 converts d8"
    state = GAME.apply(state, move)
    assert state.markers == (0, 1)  # cleared for Black, White's untouched


def test_a_forward_move_clears_the_marker():
    before, after = marker_columns(MARKER_CLEARED)
    state = play(frag(before, markers=(1, 1)), "g5-h6")
    assert same_board(state, embed(after))
    assert state.markers == (0, 1)


# -- winning, passing, drawing ----------------------------------------------------------

HOME_PLATE_WIN = """
. . . . # # # . . . .
. . . . . . . . . . .
. . # . . . . . # # .
. . . . . . . . . . .
. . O O O . O O . . .
. . . . . . . . . . .
. . . . . . . . . # .
. . . . O . . O O . .
. . . . . . . . . . .
. . . . . . O O . . .
. . . . , O , . . . .
"""

REDUCTION_WIN = """
. . . . , , , . . . .
. . . . . . . . . . .
. . # . . . . # # . .
. . . . . . . . . . .
. O . # # # # . # . .
. . O . . . . . . . .
. . . . # . # # # . .
. . # # # . . # . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . , , , . . . .
"""


def with_point(diagram: str, square: str, man: str) -> str:
    rows = [list(r) for r in rows_of(diagram)]
    rows[11 - int(square[1:])][FILES.index(square[0])] = man
    return "\n".join(" ".join(r) for r in rows)


def test_three_men_on_the_enemy_home_plate_win():
    before = with_point(with_point(HOME_PLATE_WIN, "f11", "."), "f10", "#")
    state = load(before)
    assert GAME.outcome(state) is None
    state = play(state, "f10-f11")
    assert same_board(state, HOME_PLATE_WIN)
    result = GAME.outcome(state)
    assert result is not None
    assert result.winner == 0 and "home plate" in result.reason
    assert GAME.to_move(state) is None and GAME.legal_moves(state) == []


def test_two_of_three_plate_points_are_not_enough():
    state = load(with_point(HOME_PLATE_WIN, "f11", "."), side="w")
    assert GAME.outcome(state) is None


def test_reducing_the_enemy_to_two_men_wins():
    # Before Black's last move i7 was White and i5 stood on i4: i4-i5 squares i7 (g7 g5).
    before = with_point(with_point(with_point(REDUCTION_WIN, "i7", "O"), "i5", "."), "i4", "#")
    state = load(before)
    assert qb.count(state.white) == 3 and GAME.outcome(state) is None
    move = GAME.parse_move(state, "i4-i5")
    assert GAME.describe_move(state, move) == "i4-i5 converts i7"
    state = GAME.apply(state, move)
    assert same_board(state, REDUCTION_WIN)
    result = GAME.outcome(state)
    assert result is not None
    assert result.winner == 0 and "two men or fewer" in result.reason
    assert "Game over: Black wins" in GAME.render(state)


# Every man is on its last rank and both markers show two dots: no man may step.
BLOCKED = """
# # # . , , , . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . , , , . O O O
"""


def test_a_blocked_player_passes_and_keeps_his_marker():
    state = load(with_point(BLOCKED, "h3", "O"), markers=(2, 2))
    moves = GAME.legal_moves(state)
    assert moves == [qb.PASS] and GAME.format_move(state, qb.PASS) == "pass"
    assert GAME.describe_move(state, qb.PASS) == "pass"
    with pytest.raises(IllegalMoveError, match="must pass"):
        GAME.parse_move(state, "c11-d11")
    after = play(state, "PASS")
    assert GAME.to_move(after) == 1 and after.black == state.black and after.markers == (2, 2)
    assert GAME.format_move(after, GAME.parse_move(after, "h3-h2")) == "h3-h2"


def test_pass_is_refused_while_a_move_exists():
    with pytest.raises(IllegalMoveError, match="only when you have no legal move"):
        GAME.parse_move(GAME.new_state(), "pass")


def test_neither_side_can_move_is_a_draw():
    state = load(BLOCKED, markers=(2, 2))
    result = GAME.outcome(state)
    assert result is not None and result.winner is None and "neither" in result.reason
    assert GAME.to_move(state) is None
    assert GAME.outcome(load(BLOCKED, markers=(2, 1))) is None  # White may still step


# -- repetition ------------------------------------------------------------------------

# Black's h6-g6 squares e6 (with e4, g4); White's d8-e8 squares it back (with c8, c6);
# then both step back. The men repeat every four plies, the markers every eight.
CYCLE = """
. . . . , , , . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . O O . . . . . . .
. . . . . . . . . . .
. . O . O . . # . . .
. . . . . . . . . . .
. . . . # . # . . . .
. . . . . . . . . . .
. . . . . . . . . . .
. . . . , , , . . . .
"""
CYCLE_MOVES = ["h6-g6", "d8-e8", "g6-h6", "e8-d8"]


def test_third_occurrence_of_a_position_draws():
    state = load(CYCLE)
    echoes = []
    for ply in range(10):
        assert GAME.outcome(state) is None, ply
        move = GAME.parse_move(state, CYCLE_MOVES[ply % 4])
        echoes.append(GAME.describe_move(state, move))
        state = GAME.apply(state, move)
    assert echoes[:4] == ["h6-g6 converts e6", "d8-e8 converts e6", "g6-h6", "e8-d8"]
    # After plies 2, 6 and 10 the men, the markers (0, 0) and the side to move agree.
    result = GAME.outcome(state)
    assert result is not None and result.winner is None and "third" in result.reason


def test_markers_are_part_of_the_repeated_position():
    state = load(CYCLE)
    state = play(state, *CYCLE_MOVES)  # the men are back, the markers are (1, 1)
    assert state.markers == (1, 1) and GAME.outcome(state) is None
    state = play(state, *CYCLE_MOVES[:1])
    assert GAME.outcome(state) is None


def test_option_any_repetition_draws_at_the_first_repeat_of_the_men():
    state = load(CYCLE, rep="any")
    state = play(state, *CYCLE_MOVES[:3])
    assert GAME.outcome(state) is None
    state = play(state, CYCLE_MOVES[3])
    result = GAME.outcome(state)
    assert result is not None
    assert result.winner is None and "repeated" in result.reason


def test_option_values_are_checked():
    assert GAME.new_state(repetition="ANY").repetition == "any"
    assert GAME.new_state().repetition == "threefold"
    with pytest.raises(OptionError, match="repetition"):
        GAME.new_state(repetition="twice")
    assert GAME.state_options(GAME.new_state(repetition="any")) == {"repetition": "any"}


def test_states_compare_by_position_and_history_not_by_derived_fields():
    start = GAME.new_state()
    state = play(start, "c3-c4")
    # seen, result and moves follow from the rest, so they take no part in equality.
    recomputed = state._replace(seen=(), result=None, moves=())
    assert recomputed == state
    assert (recomputed != state) is False  # tuple has its own !=, so the class defines one
    assert hash(recomputed) == hash(state)
    # The same men reached by another history are another state (repetition counts).
    assert state != state._replace(trail=())
    assert start != state


# -- notation ------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["c3-c4", "C3-C4", "c3 c4", "c3:c4", "c3c4", " c3 - c4 "])
def test_move_text_is_tolerant(text: str):
    state = GAME.new_state()
    assert GAME.format_move(state, GAME.parse_move(state, text)) == "c3-c4"


def test_two_digit_ranks_parse():
    state = load(START_DIAGRAM, side="w")
    assert GAME.format_move(state, GAME.parse_move(state, "C9C8")) == "c9-c8"
    state = load(with_point(START_DIAGRAM, "e10", "O"), side="w")
    assert GAME.format_move(state, GAME.parse_move(state, "e10 f10")) == "e10-f10"


@pytest.mark.parametrize(
    ("text", "error", "reason"),
    [
        ("c3", InvalidMoveError, "like b3-b4"),
        ("c3-c4-c5", InvalidMoveError, "like b3-b4"),
        ("l3-l4", InvalidMoveError, "not on the board"),
        ("c0-c1", InvalidMoveError, "not on the board"),
        ("c11-c12", InvalidMoveError, "not on the board"),
        ("c4-c5", IllegalMoveError, "no Black man on c4"),
        ("c9-c8", IllegalMoveError, "no Black man on c9"),
        ("c3-d3", IllegalMoveError, "d3 is not empty"),
        ("c3-c2", IllegalMoveError, "one point forward"),
        ("c3-c5", IllegalMoveError, "one point forward"),
        ("c3-a4", IllegalMoveError, "one point forward"),
    ],
)
def test_parse_errors_state_the_reason_and_quote_the_input(text, error, reason):
    with pytest.raises(error, match=reason) as info:
        GAME.parse_move(GAME.new_state(), text)
    assert f"'{text}'" in str(info.value)


def test_no_move_is_legal_after_the_game_ends():
    state = load(REDUCTION_WIN, side="w")
    with pytest.raises(IllegalMoveError, match="game is over"):
        GAME.parse_move(state, "b7-b6")


def test_aliases_and_help():
    assert get_game("QUADR") is GAME and get_game("Quadrature") is GAME
    text = GAME.help_text()
    assert "b3-b4" in text and "converts" in text and "repetition=" in text


# -- board and position text ---------------------------------------------------------


def test_render_draws_the_help_page_board_with_coordinates_reserves_and_markers():
    state = play(GAME.new_state(), "b3-a3")
    lines = GAME.render(state).splitlines()
    assert lines[0].split() == list(FILES) and lines[-2].split() == list(FILES)
    assert lines[1].startswith("11  . . . . , , , . . . .  11")
    assert lines[1].endswith("OOO       White") and lines[2].endswith("OOOO      |0|")
    assert lines[10].endswith("###       Black") and lines[11].endswith("####      |1|")
    assert lines[9].startswith(" 3  # . # # # # # # # # .   3")
    assert "9 on board, 7 in reserve" in lines[3]
    assert lines[-1] == "White to move"
    assert max(len(line) for line in lines) <= 72
    assert GAME.render(state, 0) == GAME.render(state, 1) == GAME.render(state)


def test_render_shows_conversions_in_the_reserves():
    before, _, _ = columns(SINGLE)
    state = play(frag(before), "f5-g6")
    text = GAME.render(state)
    assert "8 on board, 8 in reserve" in text  # Black put a reserve man on d8
    assert "4 on board, 12 in reserve" in text  # White's man went back to its reserve


def test_dump_and_load_hand_positions():
    state = load(CYCLE, side="b", markers=(2, 1), rep="any")
    text = GAME.dump(state)
    assert text == "11/11/11/2OO7/11/2O1O2#3/11/4#1#4/11/11/11 b 2 1 any"
    assert GAME.load(text) == state
    moved = play(state, "h6-g6")
    text = GAME.dump(moved)
    assert text.endswith(" from 11/11/11/2OO7/11/2O1O2#3/11/4#1#4/11/11/11 b 2 1 h6-g6")
    assert GAME.load(text) == moved and GAME.load(text).seen == moved.seen


def test_dump_of_a_game_from_the_start_names_start():
    state = play(GAME.new_state(), "c3-c4", "d9-d8")
    text = GAME.dump(state)
    assert text.endswith(" threefold from start c3-c4,d9-d8")
    assert GAME.load(text) == state


@pytest.mark.parametrize("repetition", ["threefold", "any"])
def test_load_steps_through_the_history_to_the_very_same_state(repetition: str):
    # load skips listing the moves of the positions on the way: every derived field
    # (repetition keys, result, moves) must still equal the state the moves built.
    rng = random.Random(repetition)
    for _ in range(8):
        state = GAME.new_state(repetition=repetition)
        for _ in range(rng.randrange(1, 80)):
            if GAME.outcome(state) is not None:
                break
            state = GAME.apply(state, rng.choice(GAME.legal_moves(state)))
            assert tuple(GAME.load(GAME.dump(state))) == tuple(state)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "11/11 b 0 0 threefold",
        "11/11/11/11/11/11/11/11/11/11/10 b 0 0 threefold",
        "11/11/11/11/11/11/11/11/11/11/1X9Z b 0 0 threefold",
        "11/11/11/11/11/11/11/11/11/11/11 x 0 0 threefold",
        "11/11/11/11/11/11/11/11/11/11/11 b 3 0 threefold",
        "11/11/11/11/11/11/11/11/11/11/11 b 0 0 sometimes",
        "11/11/11/11/11/11/11/11/11/11/11 b 0 0 threefold to start c3-c4",
        "11/11/11/11/11/11/11/11/11/11/11 b 0 0 threefold from start",
        "11/11/1OOOOOOOOO1/11/11/11/11/11/1#########1/11/11 b 0 0 threefold from start c3-c5",
        "11/11/1OOOOOOOOO1/11/11/11/11/11/1#########1/11/11 w 0 0 threefold from start c3-c4,d9-d8",
        "OOOOOOOOOOO/OOOOOO5/11/11/11/11/11/11/11/11/11 b 0 0 threefold",
    ],
)
def test_load_rejects_bad_text(text: str):
    with pytest.raises(PositionError):
        GAME.load(text)


def test_load_accepts_dots_and_commas():
    assert load(START_DIAGRAM) == GAME.new_state()


# -- a brute-force reference of the rules ---------------------------------------------
# Written from the help page and docs/games/quadrature.md, 'Rules as pbm plays them', with
# sets of (file, rank) points and every
# rectangle tried one by one; the bitboard engine must agree with it move for move.


def ref_points(mask: int) -> set[tuple[int, int]]:
    return {(i % 12, i // 12) for i in qb.bits(mask)}


def ref_squared(own: set, enemy: set, corner: tuple[int, int]) -> set:
    """Enemy men squared by a rectangle with `corner` (own) and two more own men."""
    x, y = corner
    found = set()
    for x2 in range(11):
        for y2 in range(11):
            if x2 == x or y2 == y:
                continue
            others = [(x2, y), (x, y2), (x2, y2)]
            mine = [p for p in others if p in own]
            theirs = [p for p in others if p in enemy]
            if len(mine) == 2 and len(theirs) == 1:
                found.add(theirs[0])
    return found


def ref_suicide(enemy: set, point: tuple[int, int]) -> bool:
    x, y = point
    return any(
        (x2, y) in enemy and (x, y2) in enemy and (x2, y2) in enemy
        for x2 in range(11)
        for y2 in range(11)
        if x2 != x and y2 != y
    )


def ref_play(own: set, enemy: set, frm, to):
    own, enemy = (own - {frm}) | {to}, set(enemy)
    active, converted = [to], []
    while active:
        for man in sorted(ref_squared(own, enemy, active.pop(0)), key=lambda p: (p[1], p[0])):
            if man not in enemy:
                continue
            enemy.discard(man)
            if len(own) < 16:  # an empty reserve removes without replacement ("Reserve")
                own.add(man)
                converted.append(man)
                active.append(man)
    return own, enemy, converted


def ref_moves(own: set, enemy: set, side: int, marker: int) -> set:
    forward = 1 if side == 0 else -1
    moves = set()
    for x, y in own:
        for dx, dy in ((0, forward), (-1, forward), (1, forward), (-1, 0), (1, 0)):
            to = (x + dx, y + dy)
            if not (0 <= to[0] < 11 and 0 <= to[1] < 11) or to in own or to in enemy:
                continue
            if ref_suicide(enemy, to):
                continue
            if dy == 0 and marker >= 2 and not ref_play(own, enemy, (x, y), to)[2]:
                continue
            moves.add(((x, y), to))
    return moves


def to_pair(move: int):
    frm, to = move >> 8, move & 0xFF
    return (frm % 12, frm // 12), (to % 12, to // 12)


@pytest.mark.parametrize("seed", range(6))
def test_engine_agrees_with_the_brute_force_reference_on_random_games(seed: int):
    rng = random.Random(seed)
    state, plies, conversions = GAME.new_state(), 0, 0
    while GAME.to_move(state) is not None and plies < 400:
        side = state.turn
        own = ref_points(state.white if side else state.black)
        enemy = ref_points(state.black if side else state.white)
        expected = ref_moves(own, enemy, side, state.markers[side])
        moves = GAME.legal_moves(state)
        if expected:
            assert {to_pair(m) for m in moves} == expected
        else:
            assert moves == [qb.PASS]
        # Prefer converting moves so that chains and reductions are exercised.
        scored = [m for m in moves if m != qb.PASS and ref_play(own, enemy, *to_pair(m))[2]]
        move = rng.choice(scored if scored and rng.random() < 0.7 else moves)
        after = GAME.apply(state, move)
        if move != qb.PASS:
            new_own, new_enemy, converted = ref_play(own, enemy, *to_pair(move))
            conversions += len(converted)
            assert ref_points(after.white if side else after.black) == new_own
            assert ref_points(after.black if side else after.white) == new_enemy
            sideways = to_pair(move)[0][1] == to_pair(move)[1][1]
            mark = state.markers[side] + 1 if sideways and not converted else 0
            assert (
                after.markers[side] == mark and after.markers[1 - side] == state.markers[1 - side]
            )
        state, plies = after, plies + 1
    assert conversions > 0
    assert GAME.outcome(state) is not None


def ref_perft2(state) -> int:
    """Two plies counted with the reference rules (passes included)."""
    total = 0
    side, marker = state.turn, state.markers[state.turn]
    own = ref_points(state.white if side else state.black)
    enemy = ref_points(state.black if side else state.white)
    for frm, to in ref_moves(own, enemy, side, marker):
        new_own, new_enemy, converted = ref_play(own, enemy, frm, to)
        if len(new_enemy) <= 2:
            continue  # the game is over: nothing follows
        reply = ref_moves(new_enemy, new_own, 1 - side, state.markers[1 - side])
        if not reply:  # a pass, or a draw when the mover is blocked too
            new_marker = marker + 1 if frm[1] == to[1] and not converted else 0
            reply = {"pass"} if ref_moves(new_own, new_enemy, side, new_marker) else set()
        total += len(reply)
    return total


@pytest.mark.parametrize(
    ("diagram", "side"), [(CHAIN, "b"), (NOT_THIS_TURN, "w"), (ADDED, "b")], ids=str
)
def test_perft_two_agrees_with_the_reference(diagram: str, side: str):
    state = frag(columns(diagram)[0], side=side)
    assert perft(GAME, state, 2) == ref_perft2(state)


def test_an_empty_reserve_removes_the_rest_without_replacement():
    # The help page's double square with Black at 15 men (one in reserve) and White at 3.
    state = load(
        """
        . . . . , , , . . . O
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . O . . . O . . .
        . . . . . # . . . . .
        . . . . . . . . . . .
        . . . # . # . # . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        # # # . . . . . # # .
        # # # . , , , . # # #
        """
    )
    assert qb.count(state.black) == 15 and qb.count(state.white) == 3
    move = GAME.parse_move(state, "f7-f8")
    assert GAME.describe_move(state, move) == "f7-f8 converts d8 removes h8"
    state = GAME.apply(state, move)
    assert qb.count(state.black) == 16 and names(state.white) == {"k11"}
    result = GAME.outcome(state)
    assert result is not None and result.winner == 0


def test_men_on_the_sides_or_inside_the_rectangle_do_not_matter():
    # Black's d5-d6 squares h9 with d9 and h6; men of both sides lie on the rectangle's
    # sides and inside it (help page, "SQUARING": "additional checkers on the lines of the
    # square or in the square or whatever").
    state = load(
        """
        O O . . , , , . . . .
        . . . . . . . . . . .
        . . . # O # O O . . .
        . . . O . . . . . . .
        . . . . . O # . . . .
        . . . . . . . # . . .
        . . . # . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        # # . . , , , . . # #
        """
    )
    move = GAME.parse_move(state, "d5-d6")
    assert GAME.describe_move(state, move) == "d5-d6 converts h9"


def test_white_wins_on_blacks_home_plate():
    state = load(
        """
        . . . . , , , . . # #
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . O . . . . .
        . . . . O , O . . # .
        """,
        side="w",
    )
    state = play(state, "f2-f1")
    result = GAME.outcome(state)
    assert result is not None
    assert result.winner == 1 and result.reason == "White holds Black's home plate"


@pytest.mark.parametrize("seed", range(3))
def test_the_board_always_holds_eighteen_men(seed: int):
    rng = random.Random(seed)
    state = GAME.new_state()
    while GAME.to_move(state) is not None:
        assert qb.count(state.black) + qb.count(state.white) == 18
        assert qb.count(state.black) <= 16 and qb.count(state.white) <= 16
        state = GAME.apply(state, rng.choice(GAME.legal_moves(state)))
    assert qb.count(state.black) + qb.count(state.white) <= 18
