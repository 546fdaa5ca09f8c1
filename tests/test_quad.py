"""Hand-built tests of Quad: one or more for every rule sentence of Winther's rules (Quad,
version 1.1) and of docs/games/quad.md, the notation, the board and the position text."""

from __future__ import annotations

import pytest

from pbm.games import get_game
from pbm.games.base import IllegalMoveError, InvalidMoveError, OptionError, PositionError
from pbm.games.grid import parse_square
from pbm.games.quad import QuadState

GAME = get_game("quad")


def sq(name: str) -> int:
    square = parse_square(name, 8, 8)
    assert square is not None
    return square


def board_text(white: str, black: str) -> str:
    """The board field of a position text with O on `white` and X on `black` squares."""
    cells = [["."] * 8 for _ in range(8)]
    for names, symbol in ((white, "O"), (black, "X")):
        for name in names.split():
            cells[int(name[1:]) - 1][ord(name[0]) - ord("a")] = symbol
    ranks = []
    for rank in range(7, -1, -1):
        row, gap = "", 0
        for cell in cells[rank]:
            if cell == ".":
                gap += 1
            else:
                row += (str(gap) if gap else "") + cell
                gap = 0
        ranks.append(row + (str(gap) if gap else ""))
    return "/".join(ranks)


def position(
    white: str, black: str, side: str = "o", *, counters: int = 12, ply: int = 60
) -> QuadState:
    """A move-phase position (both hands empty) with the given counters on the board."""
    return GAME.load(f"{counters} {ply}/1000 {side} 0/0 {board_text(white, black)} -")


def play(state: QuadState, *texts: str) -> QuadState:
    for text in texts:
        state = GAME.apply(state, GAME.parse_move(state, text))
    return state


def names(state: QuadState) -> set[str]:
    return {GAME.format_move(state, m) for m in GAME.legal_moves(state)}


# -- options and the start ----------------------------------------------------------


def test_default_is_twelve_counters_each_with_white_to_drop():
    state = GAME.new_state()
    assert GAME.state_options(state) == {"counters": 12, "plycap": 1000}
    assert state.hands == (12, 12)
    assert GAME.to_move(state) == 0 and GAME.seats == ("White", "Black")
    assert len(GAME.legal_moves(state)) == 64


@pytest.mark.parametrize("counters", [12, 15, 20, 25])
def test_every_counter_option_gives_that_many_drops_each(counters: int):
    state = GAME.new_state(counters=str(counters))
    # White on the dark squares, Black on the light ones: no two alike touch, no four.
    squares = [(r, f) for r in range(8) for f in range(8)]
    dark = iter(r * 8 + f for r, f in squares if (r + f) % 2 == 0)
    light = iter(r * 8 + f for r, f in squares if (r + f) % 2 == 1)
    for _ in range(counters):
        assert GAME.to_move(state) == 0 and state.hands[0] > 0
        state = GAME.apply(state, next(dark))
        assert GAME.to_move(state) == 1 and state.hands[1] > 0
        state = GAME.apply(state, next(light))
    assert state.hands == (0, 0) and state.ply == 2 * counters
    assert state.white.bit_count() == state.black.bit_count() == counters
    assert all(m >= 64 for m in GAME.legal_moves(state))  # steps only now


@pytest.mark.parametrize("value", [11, 13, 30, "many"])
def test_other_counter_numbers_are_refused(value):
    with pytest.raises(OptionError, match="counters"):
        GAME.new_state(counters=value)


def test_ply_limit_option_is_bounded():
    assert GAME.new_state(plycap="1500").ply_limit == 1500
    with pytest.raises(OptionError, match="minimum"):
        GAME.new_state(plycap=99)
    with pytest.raises(OptionError, match="maximum"):
        GAME.new_state(plycap=4001)


# -- the drop phase ---------------------------------------------------------------------


def test_white_must_drop_the_second_counter_on_the_rim():
    state = play(GAME.new_state(), "d4", "e5")
    moves = GAME.legal_moves(state)
    assert len(moves) == 28
    assert all(m % 8 in (0, 7) or m // 8 in (0, 7) for m in moves)
    with pytest.raises(IllegalMoveError, match=r"'c3' is illegal here: .*rim"):
        GAME.parse_move(state, "c3")
    assert GAME.render(state).rstrip().endswith("White to drop, on the rim.")


def test_only_whites_second_counter_is_restricted():
    state = play(GAME.new_state(), "d4")
    assert len(GAME.legal_moves(state)) == 63  # Black's first drop: anywhere empty
    state = play(state, "e5", "a1")
    assert len(GAME.legal_moves(state)) == 61  # Black's second drop: anywhere empty
    state = play(state, "c3")
    assert len(GAME.legal_moves(state)) == 60  # White's third drop: anywhere empty


def test_drops_never_capture():
    # X drops between two O counters and O drops to close X between O's: nothing leaves.
    state = play(GAME.new_state(), "d4", "e4", "a1", "h8", "f4")  # f4 closes e4 in
    assert state.black.bit_count() == 2
    assert GAME.describe_move(state, sq("c4")) == "c4"
    state = play(state, "c4")  # c4 closes d4 in
    assert state.black.bit_count() == 3 and state.white.bit_count() == 3


def test_a_four_in_the_drop_phase_wins_at_once():
    state = play(GAME.new_state(), "b2", "h8", "a2", "h7", "c2", "g8")
    assert GAME.outcome(state) is None
    state = play(state, "d2")
    result = GAME.outcome(state)
    assert result is not None and result.winner == 0 and result.reason == "four in a row"
    assert GAME.to_move(state) is None and GAME.legal_moves(state) == []
    with pytest.raises(IllegalMoveError, match="game is over"):
        GAME.parse_move(state, "e5")


def test_black_can_win_in_the_drop_phase_with_a_column_on_the_edge():
    state = play(GAME.new_state(), "d4", "h1", "a1", "h2", "c5", "h3", "f6", "h4")
    result = GAME.outcome(state)
    assert result is not None and result.winner == 1


def test_an_overline_of_five_does_not_win():
    text = f"12 8/1000 o 8/8 {board_text('a3 b3 d3 e3', 'h8 h6 g1 g7')} -"
    state = GAME.load(text)
    assert GAME.outcome(state) is None
    state = play(state, "c3")  # a3-e3: five in a row
    assert GAME.outcome(state) is None


def test_diagonals_never_count():
    state = play(GAME.new_state(), "b2", "h1", "a1", "h3", "c3", "h5", "d4")
    assert GAME.outcome(state) is None


def test_a_three_is_not_a_four():
    state = play(GAME.new_state(), "b2", "h1", "a2", "h3", "c2")
    assert GAME.outcome(state) is None


# -- the move phase -----------------------------------------------------------------


def test_move_phase_starts_with_white_after_all_drops():
    state = GAME.load(f"12 23/1000 x 0/1 {board_text('a1', 'h8')} -")
    state = play(state, "a8")
    assert state.hands == (0, 0) and GAME.to_move(state) == 0
    assert names(state) == {"a1-a2", "a1-b1"}
    assert GAME.render(state).rstrip().endswith("White to move.")


def test_a_counter_steps_one_square_orthogonally_to_an_empty_square():
    state = position("d4 a1", "d5 h8")
    assert names(state) == {"d4-c4", "d4-e4", "d4-d3", "a1-a2", "a1-b1"}
    for text, reason in (
        ("d4-d6", "one square"),
        ("d4-e5", "one square"),
        ("d4-d5", "d5 is occupied"),
        ("e4-e5", "no O counter on e4"),
        ("h8-h7", "no O counter on h8"),
        ("d4", "all counters are down"),
    ):
        with pytest.raises(IllegalMoveError, match=reason) as info:
            GAME.parse_move(state, text)
        assert f"'{text}'" in str(info.value)


def test_drop_phase_refuses_a_step():
    state = play(GAME.new_state(), "d4")
    with pytest.raises(IllegalMoveError, match="still being dropped"):
        GAME.parse_move(state, "d4-d5")
    with pytest.raises(IllegalMoveError, match="d4 is occupied"):
        GAME.parse_move(state, "d4")


@pytest.mark.parametrize(
    ("white", "black", "move", "taken"),
    [
        ("d3 d6", "d5 h8", "d3-d4", "d5"),  # capture northwards
        ("c3 f4", "e4 h8", "c3-d3", None),  # no neighbour: nothing (control)
        ("c4 f4", "e4 h8", "c4-d4", "e4"),  # capture eastwards
        ("d6 d3", "d4 h8", "d6-d5", "d4"),  # capture southwards
        ("f4 c4", "d4 h8", "f4-e4", "d4"),  # capture westwards
    ],
)
def test_the_moved_counter_captures_in_each_direction(white, black, move, taken):
    state = position(white, black)
    after = play(state, move)
    if taken is None:
        assert GAME.describe_move(state, GAME.parse_move(state, move)) == move
        assert after.black == state.black
    else:
        assert GAME.describe_move(state, GAME.parse_move(state, move)) == f"{move} x {taken}"
        assert not after.black >> sq(taken) & 1
        assert after.black.bit_count() == 1


def test_black_captures_too():
    state = position("e5 a1", "e4 e7", side="x")
    after = play(state, "e7-e6")
    assert after.white == 1 << sq("a1")


def test_several_counters_are_captured_at_once():
    # The echo of docs/games/quad.md, 'Notation': c6-d6 x d5 d7 e6.
    state = position("c6 d4 d8 f6 a1", "d5 d7 e6 h8")
    move = GAME.parse_move(state, "c6-d6")
    assert GAME.describe_move(state, move) == "c6-d6 x d5 d7 e6"
    after = GAME.apply(state, move)
    assert after.black == 1 << sq("h8")


def test_moving_between_two_enemy_counters_is_safe():
    state = position("d3 d5 a1", "c4 h8", side="x")
    after = play(state, "c4-d4")
    assert after.black == (1 << sq("d4")) | (1 << sq("h8"))
    assert after.white == state.white


def test_only_the_moved_counter_captures():
    # e4 is left between O on d4 and f4 by a White move elsewhere: it stays.
    state = position("d4 f4 a1", "e4 h8")
    after = play(state, "a1-a2")
    assert after.black == state.black


def test_two_enemy_counters_in_a_row_are_not_captured():
    state = position("c4 g4 a1", "e4 f4 h8")
    after = play(state, "c4-d4")
    assert after.black == state.black


def test_capturing_is_optional():
    state = position("d3 d6 a1", "d5 h8")
    moves = names(state)
    assert "d3-d4" in moves  # captures d5
    assert {"d3-c3", "d3-e3", "a1-a2"} <= moves  # but other moves stay legal


def test_a_four_in_the_move_phase_wins():
    state = position("a5 b5 c5 d4", "h1 h3 h5 h7")
    state = play(state, "d4-d5")
    result = GAME.outcome(state)
    assert result is not None and result.winner == 0 and result.reason == "four in a row"


def test_stepping_away_from_an_overline_can_leave_an_exact_four():
    state = position("a5 b5 c5 d5 e5", "h1 h3 h7 g2", side="o")
    assert GAME.outcome(state) is None
    state = play(state, "e5-e6")
    result = GAME.outcome(state)
    assert result is not None and result.winner == 0


def test_lines_touching_the_edge_count():
    state = position("h1 h2 h3 g4", "a1 a3 a5 a7")
    result = GAME.outcome(play(state, "g4-h4"))
    assert result is not None and result.winner == 0
    state = position("a8 b8 c8 e7", "h1 h3 h5 g2")
    result = GAME.outcome(play(state, "e7-d7"))
    assert result is None  # d7 is not on rank 8
    result = GAME.outcome(play(state, "e7-e8"))
    assert result is None  # a8 b8 c8 . e8 is no four
    state = position("a8 b8 c8 d7", "h1 h3 h5 g2")
    result = GAME.outcome(play(state, "d7-d8"))
    assert result is not None and result.winner == 0


def test_a_capture_that_leaves_the_opponent_an_exact_four_loses():
    # pbm's order of checks (docs/games/quad.md, 'Rules as pbm plays them'): Black's c4-g4
    # overline loses g4 and becomes an exact four.
    state = position("g3 h5 a1 a8", "c4 d4 e4 f4 g4")
    after = play(state, "h5-g5")
    result = GAME.outcome(after)
    assert result is not None and result.winner == 1 and result.reason == "four in a row"


def test_the_movers_four_is_checked_before_the_opponents():
    # The same order of checks: the same capture, but White's move also makes d5-g5: White wins.
    state = position("g3 h5 d5 e5 f5 a1", "c4 d4 e4 f4 g4")
    after = play(state, "h5-g5")
    result = GAME.outcome(after)
    assert result is not None and result.winner == 0


def test_reducing_the_opponent_to_no_counters_wins():
    state = position("d3 d6 a1", "d5")
    after = play(state, "d3-d4")
    result = GAME.outcome(after)
    assert after.black == 0
    assert result is not None and result.winner == 0 and result.reason == "no counters left"


def test_fewer_than_four_counters_play_on():
    state = position("d3 a1", "d5 h8 h6")
    assert GAME.outcome(state) is None
    assert GAME.to_move(play(state, "a1-a2")) == 1


def test_a_player_with_no_legal_move_loses():
    state = position("a2 c1 h5", "a1", side="o")
    after = play(state, "c1-b1")
    result = GAME.outcome(after)
    assert result is not None and result.winner == 0 and result.reason == "no legal move"
    assert GAME.to_move(after) is None


def test_a_loaded_stalemate_is_over():
    state = position("a2 b1 h5", "a1", side="x")
    result = GAME.outcome(state)
    assert result is not None and result.winner == 0


def test_third_repetition_with_the_same_side_to_move_draws():
    start = position("a1 c3", "h8 f6")
    shuffle = ("a1-a2", "h8-h7", "a2-a1", "h7-h8")
    state = play(start, *shuffle)
    assert GAME.outcome(state) is None  # second occurrence
    state = play(state, *shuffle[:3])
    assert GAME.outcome(state) is None
    state = play(state, shuffle[3])  # third occurrence of the start with White to move
    result = GAME.outcome(state)
    assert result is not None and result.winner is None and result.reason == "third repetition"


def test_the_same_board_with_the_other_side_to_move_is_no_repetition():
    state = position("a1 c3", "h8 f6")
    # White wastes a tempo in a triangle, so the board repeats with Black to move.
    state = play(state, "a1-a2", "h8-h7", "a2-b2", "h7-h8", "b2-b1", "h8-h7", "b1-a1")
    assert GAME.outcome(state) is None


def test_a_capture_starts_the_repetition_count_afresh():
    state = position("a1 d3 d6", "h8 d5 g7")
    state = play(state, "d3-d4", "h8-h7", "a1-a2", "h7-h8", "a2-a1")
    assert len(state.history) == 5 and len(state.trail) == 4
    assert GAME.dump(state).endswith(" h8h7,a1a2,h7h8,a2a1")


def test_repetition_history_survives_dump_and_load():
    start = position("a1 c3", "h8 f6")
    shuffle = ("a1-a2", "h8-h7", "a2-a1", "h7-h8")
    state = play(start, *shuffle, *shuffle[:3])
    reloaded = GAME.load(GAME.dump(state))
    assert reloaded == state
    result = GAME.outcome(play(reloaded, shuffle[3]))
    assert result is not None and result.reason == "third repetition"


def test_pbm_ply_limit_draws():
    state = GAME.load(f"12 999/1000 o 0/0 {board_text('a1 c3', 'h8 f6')} -")
    state = play(state, "a1-a2")
    result = GAME.outcome(state)
    assert result is not None and result.winner is None and "ply limit" in result.reason


def test_a_win_on_the_last_ply_beats_the_ply_limit():
    state = GAME.load(f"12 999/1000 o 0/0 {board_text('a5 b5 c5 d4', 'h1 h3')} -")
    result = GAME.outcome(play(state, "d4-d5"))
    assert result is not None and result.winner == 0


# -- notation --------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["d4", "D4", "@d4", "drop d4", "Drop D4", " d4 "])
def test_drop_spellings(text: str):
    assert GAME.parse_move(GAME.new_state(), text) == sq("d4")


@pytest.mark.parametrize("text", ["d4-d5", "D4-D5", "d4 d5", "d4:d5", "d4d5"])
def test_step_spellings(text: str):
    state = position("d4 a1", "h8 h6")
    assert GAME.format_move(state, GAME.parse_move(state, text)) == "d4-d5"


def test_a_pasted_echo_must_name_the_real_captures():
    state = position("c6 d4 d8 f6 a1", "d5 d7 e6 h8")
    move = GAME.parse_move(state, "c6-d6 x d5 d7 e6")
    assert move == GAME.parse_move(state, "c6-d6")
    with pytest.raises(IllegalMoveError, match="it plays c6-d6 x d5 d7 e6"):
        GAME.parse_move(state, "c6-d6 x d5")
    with pytest.raises(InvalidMoveError):
        GAME.parse_move(state, "c6-d6 x lots")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "drop such as d4"),
        ("?", "drop such as d4"),
        ("i9", "not a square"),
        ("d9", "not a square"),
        ("d4-d5-d6", "drop such as d4"),
        ("drop d4 d5", "drop such as d4"),
        ("hello world", "drop such as d4"),
    ],
)
def test_text_that_is_no_move(text: str, reason: str):
    with pytest.raises(InvalidMoveError, match=reason) as info:
        GAME.parse_move(GAME.new_state(), text)
    assert f"'{text}' is not a move" in str(info.value)


# -- board and position text -------------------------------------------------------------


def test_render_shows_the_board_the_hands_and_who_is_to_move():
    state = play(GAME.new_state(counters=15), "d4", "e5")
    board = GAME.render(state)
    lines = board.splitlines()
    assert lines[0].strip() == "a b c d e f g h" and lines[9].strip() == "a b c d e f g h"
    assert lines[4] == "5  . . . . X . . .  5"
    assert lines[5] == "4  . . . O . . . .  4"
    assert "White O: 14 in hand, 1 on board" in lines[10]
    assert "Black X: 14 in hand, 1 on board" in lines[10]
    assert GAME.render(state, 0) == GAME.render(state, 1) == board  # nothing is hidden
    assert max(len(line) for line in lines) <= 72


def test_render_announces_the_result():
    state = position("d3 d6 a1", "d5")
    after = play(state, "d3-d4")
    assert GAME.render(after).rstrip().endswith("Game over: White wins (no counters left).")


def test_dump_of_a_hand_position():
    state = play(GAME.new_state(), "d4", "e5")
    assert GAME.dump(state) == "12 2/1000 o 11/11 8/8/8/4X3/3O4/8/8/8 -"
    assert GAME.load(GAME.dump(state)) == state
    assert GAME.dump(GAME.new_state(counters=25)) == "25 0/1000 o 25/25 8/8/8/8/8/8/8/8 -"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "12 0/1000 o 12/12 8/8/8/8/8/8/8/8",  # a field missing
        "13 0/1000 o 13/13 8/8/8/8/8/8/8/8 -",  # no such counter option
        "12 0/50 o 12/12 8/8/8/8/8/8/8/8 -",  # ply limit below the minimum
        "12 0/1000 w 12/12 8/8/8/8/8/8/8/8 -",  # side must be o or x
        "12 0/1000 x 12/12 8/8/8/8/8/8/8/8 -",  # Black cannot drop first
        "12 1/1000 o 12/12 8/8/8/8/8/8/8/8 -",  # ply count does not fit the drops
        "12 0/1000 o 12/12 8/8/8/8/8/8/8 -",  # seven ranks
        "12 0/1000 o 12/12 9/8/8/8/8/8/8/8 -",  # a rank too long
        "12 0/1000 o 12/12 7Z/8/8/8/8/8/8/8 -",  # unknown symbol
        "12 2/1000 o 12/11 O7/8/8/8/8/8/8/8 -",  # 13 White counters
        "12 30/1000 o 0/0 O7/8/8/8/8/8/8/7X d4d6",  # a trail step of two squares
        "12 30/1000 o 0/0 O7/8/8/8/8/8/8/7X a7a8",  # the trail moves a counter of O last
        "12 24/1000 o 0/0 O7/8/8/8/8/8/8/7X a7a8,h2h1",  # too few plies for the trail
    ],
)
def test_bad_position_texts(text: str):
    with pytest.raises(PositionError):
        GAME.load(text)


def test_a_trail_rebuilds_the_history():
    state = GAME.load("12 30/1000 o 0/0 O7/8/8/8/8/8/8/7X a7a8,h2h1")
    assert len(state.history) == 3
    assert [GAME.format_move(state, m) for m in state.trail] == ["a7-a8", "h2-h1"]
    earlier = GAME.load("12 28/1000 o 0/0 8/O7/8/8/8/8/7X/8 -")
    assert play(earlier, "a7-a8", "h2-h1") == state


def test_a_player_stalemated_by_the_last_drop_loses_at_once():
    # Full ranks are overlines (no four); after X h7 no White counter touches an empty square.
    white = " ".join(f"{f}{r}" for r in (1, 2, 4) for f in "abcdefgh") + " a6"
    black = " ".join(f"{f}{r}" for r in (3, 5) for f in "abcdefgh") + " b6 c6 d6 e6 f6 g6 h6 a7"
    state = GAME.load(f"25 49/1000 x 0/1 {board_text(white, black)} -")
    assert GAME.outcome(state) is None
    after = play(state, "h7")
    result = GAME.outcome(after)
    assert result is not None and result.winner == 1 and result.reason == "no legal move"
