"""Quarto rules (Blaise Müller, Gigamic) and pbm's decisions (docs/games/quarto.md), checked
by hand positions."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable
from math import comb

import pytest

from pbm.games import get_game
from pbm.games.base import IllegalMoveError, InvalidMoveError, OptionError, PositionError
from pbm.games.quarto import GAME, QuartoState
from pbm.games.quarto_lines import BLOCKS, LINES, variant
from pbm.games.quarto_pieces import (
    ALL_ATTRIBUTES,
    CODES,
    attributes_mask,
    parse_attributes,
    parse_piece,
)

FIRST, SECOND = 0, 1


def shared_attributes(pieces: Iterable[int], attributes: int = ALL_ATTRIBUTES) -> int:
    """Mask of the counted `attributes` on which all the pieces agree (0 if none).

    This is the rules' line test, four pieces "with at least one common characteristic",
    written plainly; the engine uses the packed counters of `quarto_lines`, and these
    tests check the two against each other.
    """
    every = ALL_ATTRIBUTES
    some = 0
    for piece in pieces:
        every &= piece
        some |= piece
    return (every | (~some & ALL_ATTRIBUTES)) & attributes


def play(state: QuartoState, *moves: str) -> QuartoState:
    for text in moves:
        state = GAME.apply(state, GAME.parse_move(state, text))
    return state


def texts(state: QuartoState) -> set[str]:
    return {GAME.format_move(state, m) for m in GAME.legal_moves(state)}


def position(board: str, held: str = "-", options: str = "") -> QuartoState:
    return GAME.load(f"{board} {held} {options}".strip())


# Row 1: TLRH TLRF TLQH share tall and light; TLQF (tall, light) completes it on d1.
ROW_THREAT = "..../..../..../TLRHTLRFTLQH."


# -- pieces and notation (docs/games/quarto.md, 'Notation') --------------------------


def test_the_sixteen_pieces_are_every_combination_once():
    assert len(set(CODES)) == 16
    assert CODES[0b1111] == "TLRH" and CODES[0b0000] == "SDQF" and CODES[0b1010] == "TDRF"


def test_pieces_parse_from_letters_in_any_order_and_from_bits():
    assert parse_piece("TLRH") == parse_piece("hrlt") == parse_piece("1111") == 15
    assert parse_piece("sdqf") == parse_piece("0000") == 0
    assert parse_piece("1010") == parse_piece("TDRF")


@pytest.mark.parametrize(
    ("text", "reason"),
    [("TLR", "four letters"), ("TLRX", "'X' is not a piece letter"), ("TSRH", "height twice")],
)
def test_bad_pieces_say_why(text: str, reason: str):
    with pytest.raises(ValueError, match=reason):
        parse_piece(text)


def test_registered_under_its_name_with_first_giving_first():
    assert get_game("QUARTO") is GAME
    assert GAME.seats == ("First", "Second")


# -- the line test and the count of winning sets -------------------------------------------


def test_536_of_the_1820_four_piece_sets_share_an_attribute():
    sets = list(itertools.combinations(range(16), 4))
    assert len(sets) == 1820
    assert sum(1 for s in sets if shared_attributes(s)) == 536


@pytest.mark.parametrize(("counted", "expected"), [(1, 140), (2, 276), (3, 408), (4, 536)])
def test_winning_sets_when_only_some_attributes_count(counted: int, expected: int):
    # Independent count by inclusion-exclusion: sharing one given attribute value pair is
    # 2 x C(8,4) = 140 sets, two given attributes 4 x C(4,4) = 4, three or more none.
    assert expected == counted * 2 * comb(8, 4) - comb(counted, 2) * 4
    mask = sum((8, 4, 2, 1)[:counted])
    sets = itertools.combinations(range(16), 4)
    assert sum(1 for s in sets if shared_attributes(s, mask)) == expected


@pytest.mark.parametrize("attributes", [ALL_ATTRIBUTES, 0b0100, 0b1010])
def test_the_packed_counters_agree_with_the_line_test_on_every_set(attributes: int):
    var = variant(False, attributes)
    row = LINES[0][1]
    for pieces in itertools.combinations(range(16), 4):
        sums = sum(var.add[p][s] for p, s in zip(pieces, row, strict=True))
        assert bool(sums & var.fours) == bool(shared_attributes(pieces, attributes)), pieces


def test_groups_are_ten_lines_and_nine_squares():
    assert len(LINES) == 10 and len(BLOCKS) == 9
    assert ("diagonal a4-d1", (12, 9, 6, 3)) in LINES
    assert ("square c3-d4", (10, 11, 14, 15)) in BLOCKS


# -- the game sequence (Quarto rules, "Game sequence"; pbm's first giver) -----------------


def test_first_gives_one_of_the_sixteen_pieces_and_places_nothing():
    start = GAME.new_state()
    assert GAME.to_move(start) == FIRST
    assert texts(start) == {f"give {code}" for code in CODES}


def test_second_places_the_given_piece_anywhere_then_gives_one_of_fifteen():
    state = play(GAME.new_state(), "give TLRH")
    assert GAME.to_move(state) == SECOND
    moves = texts(state)
    assert len(moves) == 16 * 15
    assert "b2 SDQF" in moves and "b2 TLRH" not in moves
    state = play(state, "b2 SDQF")
    assert state.board[5] == parse_piece("TLRH") and state.held == parse_piece("SDQF")
    assert GAME.to_move(state) == FIRST
    assert len(GAME.legal_moves(state)) == 15 * 14


def test_a_line_sharing_an_attribute_wins_for_the_placer_who_placed_only_the_last_piece():
    # Second placed TLRH and TLQH, First placed TLRF; First now completes row 1 with TLQF.
    state = play(GAME.new_state(), "give TLRH", "a1 TLRF", "b1 TLQH", "c1 TLQF")
    assert GAME.to_move(state) == FIRST
    state = play(state, "d1")
    result = GAME.outcome(state)
    assert result is not None and result.winner == FIRST
    assert result.reason == "quarto: row 1 all tall and light"
    assert GAME.to_move(state) is None and GAME.legal_moves(state) == []


@pytest.mark.parametrize(
    ("board", "square", "group"),
    [
        ("TLRH.../TLRF.../TLQH.../....", "a1", "column a"),
        ("TLRH.../.TLRF../..TLQH./....", "d1", "diagonal a4-d1"),
        ("...TLRH/..TLRF./.TLQH../....", "a1", "diagonal a1-d4"),
    ],
)
def test_columns_and_both_diagonals_win(board: str, square: str, group: str):
    state = play(position(board, "TLQF"), square)
    result = GAME.outcome(state)
    assert result is not None
    assert result.reason == f"quarto: {group} all tall and light"


def test_a_full_line_without_a_shared_attribute_does_not_win():
    # TLRH TLRF TDQH SDQF: no attribute common to all four.
    state = play(position("..../..../..../TLRHTLRFTDQH.", "SDQF"), "d1 SLRH")
    assert GAME.outcome(state) is None and GAME.to_move(state) == SECOND


def test_characteristics_accumulate_and_several_lines_can_complete_at_once():
    # d1 completes row 1 (tall and light) and column d (round) with TLRF.
    board = "...TDRH/...SDRH/...TDRF/TLQFTLQHTLRH."
    state = play(position(board, "TLRF"), "d1")
    result = GAME.outcome(state)
    assert result is not None
    assert result.winner == SECOND
    assert result.reason == "quarto: row 1 all tall and light; column d all round"
    lines = GAME.render(state).splitlines()
    assert max(len(line) for line in lines) <= 72
    at = lines.index("  QUARTO! Second wins:")
    assert lines[at + 1 : at + 3] == ["    row 1 all tall and light", "    column d all round"]


def test_all_sixteen_placed_without_a_quarto_is_a_draw():
    end = "TLQFSDQHTDRFSDQF/SDRHTDQHTLQHSLQF/TDQFTLRHSDRFTLRF/TDRHSLRFSLRH."
    state = position(end, "SLQH")
    assert texts(state) == {"d1"}  # the 16th placement gives nothing
    state = play(state, "d1")
    result = GAME.outcome(state)
    assert result is not None and result.winner is None
    assert result.reason == "all 16 pieces placed without a quarto"


def test_a_winning_placement_gives_nothing_and_others_must_give():
    state = position(ROW_THREAT, "TLQF")
    moves = texts(state)
    assert "d1" in moves and not any(m.startswith("d1 ") for m in moves)
    assert len(moves) == 1 + 12 * 12
    assert all(len(m.split()) == 2 for m in moves - {"d1"})


def test_the_fifteenth_placement_gives_the_last_piece_unless_it_wins():
    board = "TLQFSDQHTDRFSDQF/SDRHTDQHTLQHSLQF/TDQFTLRHSDRFTLRF/..SLRHSLQH"
    state = position(board, "TDRH")
    assert texts(state) == {"a1 SLRF", "b1"}  # b1 makes column b all hollow


# -- variants ----------------------------------------------------------------------


BLOCK_THREAT = "..../..../TLQF.../TLRHTDQF.."  # a1, b1, a2 share only "tall"


def test_advanced_variant_makes_the_2x2_squares_win():
    advanced = play(position(BLOCK_THREAT, "TDRH", "advanced=yes"), "b2")
    result = GAME.outcome(advanced)
    assert result is not None
    assert result.reason == "quarto: square a1-b2 all tall"
    assert result.winner == FIRST


def test_without_the_advanced_variant_a_2x2_square_does_not_win():
    state = position(BLOCK_THREAT, "TDRH")
    assert "b2" not in texts(state)
    assert GAME.outcome(play(state, "b2 SDQF")) is None


def test_beginners_variant_counts_only_the_chosen_attributes():
    # Row 1 shares tall and light. Counting shape only, TLQF on d1 wins nothing.
    shape = position(ROW_THREAT, "TLQF", "attributes=shape")
    assert "d1" not in texts(shape)
    assert GAME.outcome(play(shape, "d1 SDQF")) is None
    colour = play(position(ROW_THREAT, "TLQF", "attributes=colour"), "d1")
    result = GAME.outcome(colour)
    assert result is not None
    assert result.reason == "quarto: row 1 all light"  # tall is not counted


def test_options_combine():
    state = GAME.new_state(advanced="yes", attributes="height")
    assert GAME.state_options(state) == {"advanced": True, "attributes": "height"}
    state = position(BLOCK_THREAT, "TDRH", "advanced=yes attributes=colour")
    assert "b2" not in texts(state)  # the square shares height, which is not counted


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("colour", "colour"),
        ("Color", "colour"),
        ("height, shape", "height,shape"),
        ("shape+height", "height,shape"),
        ("TL", "height,colour"),
        ("dark hollow round", "colour,shape,top"),
        ("all", "all"),
        ("height colour shape top", "all"),
    ],
)
def test_the_attributes_option_reads_names_value_words_and_letters(text: str, canonical: str):
    assert parse_attributes(text) == canonical
    assert GAME.state_options(GAME.new_state(attributes=text))["attributes"] == canonical


@pytest.mark.parametrize("text", ["", "weight", "colour,xyz"])
def test_bad_attributes_are_refused(text: str):
    with pytest.raises(OptionError, match="attributes"):
        GAME.new_state(attributes=text)


def test_attribute_masks_follow_the_piece_bits():
    assert attributes_mask("height") == 8 and attributes_mask("top") == 1
    assert GAME.new_state().variant.attributes == ALL_ATTRIBUTES


def test_bad_option_values_are_refused():
    with pytest.raises(OptionError):
        GAME.new_state(advanced="maybe")
    with pytest.raises(OptionError):
        GAME.new_state(attributes=3)


# -- parsing ------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["give TLRH", "/TLRH", "give 1111", "TLRH", "GIVE hrlt"])
def test_the_opening_give_is_accepted_in_several_spellings(text: str):
    state = GAME.new_state()
    assert GAME.format_move(state, GAME.parse_move(state, text)) == "give TLRH"


@pytest.mark.parametrize("text", ["b2 SDQF", "b2/SDQF", "B2-sdqf", "b2:0000", "b2 give SDQF"])
def test_place_and_give_is_accepted_in_several_spellings(text: str):
    state = play(GAME.new_state(), "give TLRH")
    assert GAME.format_move(state, GAME.parse_move(state, text)) == "b2 SDQF"


def test_a_winning_placement_may_name_a_piece_which_is_ignored():
    state = position(ROW_THREAT, "TLQF")
    assert GAME.parse_move(state, "d1 SDQF") == GAME.parse_move(state, "d1")


@pytest.mark.parametrize(
    ("moves", "text", "error", "reason"),
    [
        ((), "b2 SDQF", IllegalMoveError, "first move only gives a piece"),
        ((), "give", IllegalMoveError, "say which piece"),
        (("give TLRH",), "SLRF", IllegalMoveError, "first place TLRH on an empty square"),
        (("give TLRH",), "b2", IllegalMoveError, "b2 does not win, so give a piece"),
        (("give TLRH",), "b2 TLRH", IllegalMoveError, "TLRH is the piece you are placing"),
        (("give TLRH", "b2 SDQF"), "b2 SDQH", IllegalMoveError, "b2 is occupied"),
        (("give TLRH", "b2 SDQF"), "c3 TLRH", IllegalMoveError, "TLRH is already on the board"),
        ((), "e5", InvalidMoveError, "e5 is not a square"),
        ((), "b2 TLRX", InvalidMoveError, "TLRX is not a piece"),
        ((), "b2 TTRH", InvalidMoveError, "height twice"),
        ((), "b2 c3", InvalidMoveError, "write give TLRH"),
        ((), "", InvalidMoveError, "write give TLRH"),
    ],
)
def test_parse_errors_quote_the_input_and_say_why(moves, text, error, reason):
    state = play(GAME.new_state(), *moves)
    with pytest.raises(error) as info:
        GAME.parse_move(state, text)
    assert f"'{text}'" in str(info.value) and reason in str(info.value)


def test_the_last_placement_refuses_a_give():
    state = position("TLQFSDQHTDRFSDQF/SDRHTDQHTLQHSLQF/TDQFTLRHSDRFTLRF/TDRHSLRFSLRH.", "SLQH")
    with pytest.raises(IllegalMoveError, match="no pieces are left"):
        GAME.parse_move(state, "d1 TLRH")
    with pytest.raises(IllegalMoveError, match="place SLQH on the last empty square: d1"):
        GAME.parse_move(state, "give TLRH")


def test_no_move_after_the_end():
    state = play(position(ROW_THREAT, "TLQF"), "d1")
    with pytest.raises(IllegalMoveError, match="game is over"):
        GAME.parse_move(state, "a2 SDQF")
    with pytest.raises(IllegalMoveError):
        GAME.apply(state, GAME.legal_moves(position(ROW_THREAT, "TLQF"))[0])


def test_apply_refuses_moves_that_are_not_legal():
    start = GAME.new_state()
    after = play(start, "give TLRH", "b2 SDQF")
    place_b2 = GAME.parse_move(play(start, "give TLRH"), "b2 SLRF")
    give_only = GAME.parse_move(start, "give SLRF")
    for state, move in ((after, place_b2), (start, place_b2), (after, give_only)):
        with pytest.raises(IllegalMoveError):
            GAME.apply(state, move)
    no_give = GAME.parse_move(position(ROW_THREAT, "TLQF"), "d1")  # legal only as a win
    with pytest.raises(IllegalMoveError, match="not a legal move"):
        GAME.apply(play(start, "give TLRH"), no_give)


def test_describe_move_tells_what_was_placed_given_and_won():
    state = play(GAME.new_state(), "give TLRH")
    assert GAME.describe_move(state, GAME.parse_move(state, "b2 sdqf")) == (
        "b2 SDQF: places TLRH on b2, gives SDQF"
    )
    state = position(ROW_THREAT, "TLQF")
    assert GAME.describe_move(state, GAME.parse_move(state, "d1")) == (
        "d1: places TLQF on d1, QUARTO! row 1 all tall and light"
    )


# -- the board ------------------------------------------------------------------------


def test_render_shows_pieces_the_piece_to_place_the_unused_pieces_and_a_key():
    state = play(GAME.new_state(), "give TLRH", "b2 SDQF")
    board = GAME.render(state)
    lines = board.splitlines()
    assert lines[0].split() == ["a", "b", "c", "d"] == lines[10].split()
    assert lines[1] == lines[9] == "    +------+------+------+------+"
    assert "  2 | .... | TLRH | .... | .... |  2" in lines
    assert "To place (First): SDQF" in board
    assert "Unused (14): SDQH" in board and "TLRH" not in board.split("Unused")[1]
    assert "T/S tall/short" in board and "H/F hollow/filled" in board
    assert GAME.render(state, FIRST) == GAME.render(state, SECOND) == board  # nothing hidden


def test_render_marks_the_winning_line_and_names_the_variant():
    state = play(position(ROW_THREAT, "TLQF", "advanced=yes attributes=colour"), "d1")
    board = GAME.render(state)
    assert "  1 |*TLRH*|*TLRF*|*TLQH*|*TLQF*|  1" in board
    assert "QUARTO! First wins: row 1 all light" in board
    assert "Advanced: the nine 2x2 squares also win." in board
    assert "Beginners: only colour counts." in board


# -- position text -------------------------------------------------------------------


def test_dump_writes_ranks_from_the_top_the_held_piece_and_the_options():
    state = play(GAME.new_state(advanced=True), "give TLRH", "a1 SDQF", "d4 SLRH")
    assert GAME.dump(state) == "...SDQF/..../..../TLRH... SLRH advanced=yes attributes=all"
    assert GAME.load(GAME.dump(state)) == state
    assert GAME.dump(GAME.new_state()) == "..../..../..../.... - advanced=no attributes=all"


def test_load_is_case_insensitive_and_options_default():
    state = GAME.load("...tlrh/..../..../sdqf... slrh")
    assert GAME.dump(state) == "...TLRH/..../..../SDQF... SLRH advanced=no attributes=all"
    assert GAME.to_move(state) == SECOND  # two placed and a piece held: the 4th ply


def test_loaded_finished_games_know_their_result():
    won = GAME.load("..../..../..../TLRHTLRFTLQHTLQF - attributes=colour")
    result = GAME.outcome(won)
    assert result is not None
    assert result.winner == FIRST  # 4 placements: the 4th was First's
    assert GAME.to_move(won) is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "not a Quarto position"),
        ("..../..../.... -", "4 ranks"),
        ("..../..../..../... -", "rank 1 does not hold 4 squares"),
        ("..../..../..../TLRHTLRH.. -", "appears twice"),
        ("..../..../..../TLRH... TLRH", "appears twice"),
        ("..../..../..../XLRH... -", "XLRH is not a piece"),
        ("..../..../..../TLRH... -", "has a held piece"),
        ("..../..../..../TLRHTLRFTLQHTLQF SDQF", "no piece is held"),
        (
            "TLRHTLRFTLQHTLQF/..../..../SDQFSDQHSDRFSDRH -",
            "separate quartos cannot arise",
        ),
        ("..../..../..../.... - colour=yes", "no option"),
        ("..../..../..../.... - advanced", "name=value"),
    ],
)
def test_load_refuses_bad_positions(text: str, reason: str):
    with pytest.raises(PositionError, match=reason):
        GAME.load(text)


def plain_quartos(state: QuartoState) -> list[str]:
    """The winning groups by the plain line test (no counters)."""
    var = state.variant
    found = []
    for name, squares in var.groups:
        pieces = [state.board[s] for s in squares]
        if -1 not in pieces and shared_attributes(pieces, var.attributes):
            found.append(name)
    return found


def test_random_games_agree_with_the_plain_line_test():
    rng = random.Random(11)
    for options in GAME.example_options:
        for _ in range(20):
            state = GAME.new_state(**options)
            while GAME.to_move(state) is not None:
                assert not plain_quartos(state)
                state = GAME.apply(state, rng.choice(GAME.legal_moves(state)))
                assert state.sums == state.variant.counters(state.board, -1)
            result = GAME.outcome(state)
            assert result is not None
            assert (result.winner is None) == (not plain_quartos(state))
            assert all(name in result.reason for name in plain_quartos(state))
