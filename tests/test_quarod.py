"""Hand-built tests for Quarod: one or more for every sentence of the rules (Quarod rules,
Luis Bolaños Mures 2020), the examples and pbm's decisions of docs/games/quarod.md, every
option, every parse error, the board, the position text, and a slow reference engine
written straight from the rules text that the fast engine must agree with."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from pbm.games import get_game
from pbm.games.base import (
    AmbiguousMoveError,
    IllegalMoveError,
    InvalidMoveError,
    OptionError,
    PositionError,
)
from pbm.games.playout import perft
from pbm.games.quarod import GAME

PIE_TEXT = "swap"


def play(state, *texts):
    for text in texts:
        state = GAME.apply(state, GAME.parse_move(state, text))
    return state


def legal_texts(state) -> set[str]:
    return {GAME.format_move(state, m) for m in GAME.legal_moves(state)}


# -- a reference engine, written from the rules text alone -------------------------------

STEPS = {"N": (0, 1), "E": (1, 0), "S": (0, -1), "W": (-1, 0)}
LETTERS = {("B", d): d for d in "NESW"} | {("W", d): d.lower() for d in "NESW"}


class Reference:
    """Slow and plain: squares are (file, rank), pieces (colour letter, rod letter)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.pieces: dict[tuple[int, int], tuple[str, str]] = {}
        self.turn = "B"
        self.turns_taken = 0  # placements, swaps and the pie switch
        self.last_mover: str | None = None

    def name(self, square: tuple[int, int]) -> str:
        return "abcdefghijkl"[square[0]] + str(square[1] + 1)

    def neighbours(self, square):
        f, r = square
        for df, dr in STEPS.values():
            if 0 <= f + df < self.size and 0 <= r + dr < self.size:
                yield (f + df, r + dr)

    def facing(self, square):
        df, dr = STEPS[self.pieces[square][1]]
        return (square[0] + df, square[1] + dr)

    def engaged_to(self, square):
        """The piece this one is engaged to: adjacent, opposite colour, rods in one line."""
        other = self.facing(square)
        if (
            other in self.pieces
            and self.pieces[other][0] != self.pieces[square][0]
            and self.facing(other) == square
        ):
            return other
        return None

    def rod_towards(self, source, target) -> str:
        step = (target[0] - source[0], target[1] - source[1])
        return next(d for d, s in STEPS.items() if s == step)

    def moves(self) -> set[str]:
        found = set()
        if self.turns_taken == 1:
            found.add(PIE_TEXT)  # White's first turn: the pie switch
        squares = [(f, r) for r in range(self.size) for f in range(self.size)]
        for a in squares:
            for c in self.neighbours(a):
                if a not in self.pieces and c not in self.pieces:
                    found.add(f"B{self.name(a)}+W{self.name(c)}")
                elif a in self.pieces and c in self.pieces:
                    low, high = sorted((a, c), key=lambda s: (s[1], s[0]))
                    if (
                        self.pieces[a][0] != self.pieces[c][0]
                        and self.engaged_to(a) is not None
                        and self.engaged_to(c) is not None
                        and self.engaged_to(a) != c
                    ):
                        found.add(f"{self.name(low)}<>{self.name(high)}")
        return found if found - {PIE_TEXT} else set()

    def square(self, name: str) -> tuple[int, int]:
        return ("abcdefghijkl".index(name[0]), int(name[1:]) - 1)

    def play(self, text: str) -> None:
        self.turns_taken += 1
        if text == PIE_TEXT:
            return  # colours change hands; the same colour (White) moves again
        if "+" in text:
            black, white = (self.square(part[1:]) for part in text.split("+"))
            self.pieces[black] = ("B", self.rod_towards(black, white))
            self.pieces[white] = ("W", self.rod_towards(white, black))
        else:
            a, c = (self.square(part) for part in text.split("<>"))
            colour_a, colour_c = self.pieces[a][0], self.pieces[c][0]
            self.pieces[c] = (colour_a, self.rod_towards(c, a))
            self.pieces[a] = (colour_c, self.rod_towards(a, c))
        self.last_mover = self.turn
        self.turn = "W" if self.turn == "B" else "B"

    def board_text(self) -> str:
        ranks = []
        for r in range(self.size - 1, -1, -1):
            ranks.append(
                "".join(
                    LETTERS[self.pieces[(f, r)]] if (f, r) in self.pieces else "."
                    for f in range(self.size)
                )
            )
        return "/".join(ranks)

    def group_counts(self) -> dict[str, Counter[int]]:
        counts: dict[str, Counter[int]] = {"B": Counter(), "W": Counter()}
        seen = set()
        for start, (colour, _) in self.pieces.items():
            if start in seen:
                continue
            seen.add(start)
            todo, size = [start], 0
            while todo:
                square = todo.pop()
                size += 1
                for other in self.neighbours(square):
                    if other not in seen and self.pieces.get(other, ("",))[0] == colour:
                        seen.add(other)
                        todo.append(other)
            counts[colour][size] += 1
        return counts

    def scores(self) -> tuple[int, int]:
        counts = self.group_counts()
        result = []
        for me, them in (("B", "W"), ("W", "B")):
            sizes = [s for s in counts[me] if counts[me][s] > counts[them][s]]
            result.append(max(sizes, default=0))
        return result[0], result[1]


@pytest.mark.parametrize("size", range(5, 13))
def test_the_engine_agrees_with_the_reference_on_random_games(size: int):
    for seed in range(4):
        rng = random.Random(size * 100 + seed)
        state, ref = GAME.new_state(size=size), Reference(size)
        while True:
            texts = legal_texts(state)
            assert texts == ref.moves()
            assert GAME.load(GAME.dump(state)) == state  # masks kept right move by move
            assert GAME.dump(state).split()[0] == ref.board_text()
            if not texts:
                break
            # Take the pie now and then so that the games after a switch are covered too.
            pick = PIE_TEXT if PIE_TEXT in texts and seed % 2 else rng.choice(sorted(texts))
            state = play(state, pick)
            ref.play(pick)
        assert GAME.to_move(state) is None
        result = GAME.outcome(state)
        assert result is not None
        assert result.scores == ref.scores()
        black, white = ref.scores()
        # With as many black pieces as white ones, one zero score means both are zero.
        assert (black == 0) == (white == 0)
        if black != white:
            assert result.winner == (0 if black > white else 1)
        else:
            assert result.winner == (1 if ref.last_mover == "B" else 0)


def test_reference_perft_three_on_five_by_five_matches():
    state = GAME.new_state(size=5)
    total = 0
    for first in GAME.legal_moves(state):
        after_first = GAME.apply(state, first)
        for second in GAME.legal_moves(after_first):
            ref = Reference(5)
            ref.play(GAME.format_move(state, first))
            ref.play(GAME.format_move(after_first, second))
            total += len(ref.moves())
    assert total == perft(GAME, state, 3) == 324_736


# -- helpers for hand-built positions ------------------------------------------------


def picture_position(rows: list[str], turn: str = "b", sides: str = "kept") -> str:
    """Position text from a picture of colours (B, W, '.'; top rank first). Each rod
    points at a like-coloured neighbour where there is one, else at a neighbour that does
    not point back, so hand pictures have no engaged pairs unless one is forced."""
    size = len(rows)
    grid = {(f, size - 1 - r): ch for r, row in enumerate(rows) for f, ch in enumerate(row)}
    rods: dict[tuple[int, int], str] = {}
    for (f, r), colour in sorted(grid.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if colour == ".":
            continue
        options = []
        for d, (df, dr) in STEPS.items():
            other = (f + df, r + dr)
            if grid.get(other, ".") == ".":
                continue
            back = rods.get(other)
            points_back = back is not None and STEPS[back] == (-df, -dr)
            options.append((grid[other] != colour, points_back, d))
        rods[(f, r)] = min(options)[2]
    ranks = []
    for r in range(size - 1, -1, -1):
        rank = ""
        for f in range(size):
            colour = grid[(f, r)]
            rank += "." if colour == "." else LETTERS[(colour, rods[(f, r)])]
        ranks.append(rank)
    return f"{'/'.join(ranks)} {turn} {sides}"


# -- options and the start -------------------------------------------------------------


def test_registered_under_its_name():
    assert get_game("Quarod") is GAME


def test_default_board_is_empty_eight_by_eight_with_black_to_move():
    state = GAME.new_state()
    assert GAME.seats == ("Black", "White")
    assert state.size == 8
    assert GAME.dump(state) == "/".join(["........"] * 8) + " b kept"
    assert GAME.to_move(state) == 0
    assert GAME.player_seats(state) == (0, 1)
    assert GAME.outcome(state) is None


@pytest.mark.parametrize("size", range(5, 13))
def test_every_size_starts_with_all_placements(size: int):
    state = GAME.new_state(size=str(size))
    # 2*size*(size-1) adjacent pairs, each with two colourings.
    assert len(GAME.legal_moves(state)) == 4 * size * (size - 1)
    assert GAME.state_options(state) == {"size": size}


@pytest.mark.parametrize("size", range(5, 13))
def test_perft_two_matches_the_hand_formula(size: int):
    # After one placement on squares p, q the free pairs are all pairs not touching p or
    # q: edges - (deg p + deg q - 1). Summing over the first pair gives edges*(edges+1)
    # - sum of deg^2; each pair has 2 colourings twice over, and White may also swap.
    edges = 2 * size * (size - 1)
    degrees = [4] * (size - 2) ** 2 + [3] * 4 * (size - 2) + [2] * 4
    expected = 4 * (edges * (edges + 1) - sum(d * d for d in degrees)) + 2 * edges
    assert perft(GAME, GAME.new_state(size=size), 2) == expected


@pytest.mark.parametrize("bad", [4, 13, "x", "", True])
def test_bad_sizes_are_refused(bad):
    with pytest.raises(OptionError, match="size"):
        GAME.new_state(size=bad)


# -- "Two adjacent opposite-coloured pieces are engaged ... if their rods form a line" ---


def test_engagement_needs_opposite_colours_adjacency_and_facing_rods():
    # a1 Black E faces b1 White W: engaged. a2 White E faces b2 White W: like colours.
    # b4 Black S and b3 White N face each other: engaged. a3 Black E and c3 Black W face
    # b3, but b3 faces b4: not engaged.
    state = GAME.load("...../.S.../EnW../ew.../Ew... b kept")
    engaged = {"abcde"[sq % 5] + str(sq // 5 + 1) for sq in range(25) if state.engaged >> sq & 1}
    assert engaged == {"a1", "b1", "b3", "b4"}
    board = GAME.render(state).splitlines()
    assert board[2] == "4  .  Xv .  .  .   4"  # engaged pieces in upper case
    assert board[3] == "3  x> O^ x< .  .   3"
    assert board[4] == "2  o> o< .  .  .   2"  # like colours are never engaged
    assert board[5] == "1  X> O< .  .  .   1"


def test_a_placement_puts_an_engaged_pair_with_rods_facing():
    state = play(GAME.new_state(), "Bc3+Wc4")
    rank3, rank4 = GAME.dump(state).split()[0].split("/")[5:3:-1]
    assert rank3 == "..N....." and rank4 == "..s....."
    assert bin(state.engaged).count("1") == 2
    assert GAME.to_move(state) == 1


def test_placement_text_forms_all_mean_the_same_move():
    state = GAME.new_state()
    move = GAME.parse_move(state, "Bc3+Wc4")
    for text in ("Wc4+Bc3", "place Bc3 Wc4", "bc3 wc4", "Xc3+Oc4", "c3 Wc4", "Bc3-c4", "BC3:WC4"):
        assert GAME.parse_move(state, text) == move, text
    assert GAME.format_move(state, move) == "Bc3+Wc4"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Bc3+Wd4", "adjacent"),
        ("Bc3+Wc5", "adjacent"),
        ("Bc3+Bc4", "one piece must be Black and the other White"),
        ("Bd4+We4", "d4 is not empty"),
        ("c4 d4", "a placement needs two empty squares, a swap two pieces"),
        ("place c4 d4", "d4 is not empty"),
    ],
)
def test_illegal_placements_say_why(text: str, reason: str):
    state = play(GAME.new_state(), "Bd4+Wd5")
    with pytest.raises(IllegalMoveError) as info:
        GAME.parse_move(state, text)
    assert reason in str(info.value) and f"'{text}'" in str(info.value)


def test_two_bare_empty_squares_are_ambiguous_between_the_two_colourings():
    with pytest.raises(AmbiguousMoveError) as info:
        GAME.parse_move(GAME.new_state(), "c3 c4")
    assert set(info.value.candidates) == {"Bc3+Wc4", "Bc4+Wc3"}


# -- "Swap ... two adjacent pieces of different colours that are already engaged but not
#    to each other, and rotate them so that they are engaged to each other" -------------


def notes_example():
    # The swap example of docs/games/quarod.md, 'Notation': Black c3 rod E, White d3 rod W;
    # then White c4 rod E, Black d4 rod W.
    return play(GAME.new_state(), "Bc3+Wd3", "Wc4+Bd4")


def test_the_notes_swap_example_is_legal_and_turns_both_pieces():
    state = notes_example()
    assert legal_texts(state) >= {"c3<>c4", "d3<>d4"}
    assert sum(1 for t in legal_texts(state) if "<>" in t) == 2
    move = GAME.parse_move(state, "c3<>c4")
    assert GAME.describe_move(state, move) == "c3<>c4 (d3 and d4 no longer engaged)"
    after = GAME.apply(state, move)
    rank4, rank3 = GAME.dump(after).split()[0].split("/")[4:6]
    # Black now on c4 rod S, White on c3 rod N; d3, d4 still point at c3, c4.
    assert rank4 == "..SW...." and rank3 == "..nw...."
    engaged = [sq for sq in range(64) if after.engaged >> sq & 1]
    assert engaged == [2 * 8 + 2, 3 * 8 + 2]  # c3 and c4 only: one pair fewer than before
    assert not any("<>" in t for t in legal_texts(after))


def test_swap_text_forms():
    state = notes_example()
    move = GAME.parse_move(state, "c3<>c4")
    for text in ("c4<>c3", "swap c3 c4", "SWAP C4-C3", "c3 c4", "c3:c4"):
        assert GAME.parse_move(state, text) == move, text
    assert GAME.format_move(state, move) == "c3<>c4"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("c3<>d3", "engaged to each other"),
        ("c3<>d4", "adjacent"),
        ("c4<>d4", "engaged to each other"),
        ("c3<>c2", "c2 is empty"),
        ("swap c3 Wc4", "no colours"),
    ],
)
def test_illegal_swaps_on_the_notes_example_say_why(text: str, reason: str):
    with pytest.raises((IllegalMoveError, InvalidMoveError)) as info:
        GAME.parse_move(notes_example(), text)
    assert reason in str(info.value)


def test_a_swap_needs_both_pieces_engaged():
    # a1 Black E and b1 White W are engaged. a2 White S faces a1, b2 Black S faces b1, but
    # a1 and b1 face each other, so a2 and b2 are not engaged to anything.
    state = GAME.load("...../...../...../sS.../Ew... b kept")
    with pytest.raises(IllegalMoveError, match="a2 is not engaged"):
        GAME.parse_move(state, "a1<>a2")
    with pytest.raises(IllegalMoveError, match="b2 is not engaged"):
        GAME.parse_move(state, "b1<>b2")
    with pytest.raises(IllegalMoveError, match="a2 is not engaged"):
        GAME.parse_move(state, "a2<>b2")
    assert not any("<>" in t for t in legal_texts(state))


def test_a_swap_needs_different_colours():
    # Two vertical pairs with Black below: a1, b1 are both Black and each engaged.
    state = GAME.load("...../...../...../ss.../NN... w kept")
    with pytest.raises(IllegalMoveError, match="different colours"):
        GAME.parse_move(state, "a1<>b1")
    with pytest.raises(IllegalMoveError, match="different colours"):
        GAME.parse_move(state, "a2 b2")
    assert not any("<>" in t for t in legal_texts(state))


def test_a_swap_between_two_engaged_pairs_side_by_side():
    # Two vertical pairs: a1 Black N / a2 White S, and b1 White N / b2 Black S. a1-b1 and
    # a2-b2 are each different colours, engaged, not to each other: two swaps.
    state = GAME.load("...../...../...../sS.../Nn... w kept")
    assert {t for t in legal_texts(state) if "<>" in t} == {"a1<>b1", "a2<>b2"}
    after = play(state, "a1<>b1")
    # b1 now holds Black facing west, a1 White facing east; a2 and b2 face like colours.
    assert GAME.dump(after).split()[0].split("/")[3:] == ["sS...", "eW..."]


# -- "If you have no moves available, you must pass. Passing is otherwise not allowed.
#    The game ends when both players pass in succession." ------------------------------


def test_pass_is_refused_while_a_move_exists_and_never_listed():
    state = GAME.new_state()
    with pytest.raises(IllegalMoveError, match="you pass only when no move exists"):
        GAME.parse_move(state, "pass")
    assert all(m != "pass" for m in legal_texts(state))


def test_no_placement_but_a_swap_left_keeps_the_game_going():
    # 5x5 with one empty square (d4) and two engaged pairs in the corner: a1 Black N with
    # a2 White S, b1 White N with b2 Black S. Only the two swaps between them remain.
    text = picture_position(["BBBWW", "WWB.W", "BWBWB", "WBWBW", "BWBWB"], turn="w")
    ranks = text.split()[0].split("/")
    ranks[3] = "sS" + ranks[3][2:]
    ranks[4] = "Nn" + ranks[4][2:]
    state = GAME.load("/".join(ranks) + " w kept")
    assert legal_texts(state) == {"a1<>b1", "a2<>b2"}
    assert GAME.to_move(state) == 1
    after = play(state, "a2<>b2")
    assert GAME.legal_moves(after) == []
    assert GAME.to_move(after) is None  # no one can move: both pass, the game is over


def test_the_game_ends_when_neither_side_has_a_placement_or_swap():
    text = picture_position(["BBBWWW", "WWBWBB", "BWBWBW", "BWWBBW", "BBWBWW", "WBWBWB"], turn="w")
    state = GAME.load(text)
    assert state.engaged == 0
    assert GAME.legal_moves(state) == []
    assert GAME.to_move(state) is None
    assert GAME.outcome(state) is not None
    with pytest.raises(IllegalMoveError, match="the game is over"):
        GAME.parse_move(state, "a1<>b1")


# -- "Your score is the biggest group size in which you have the greater number of
#    groups. If there is no such size, your score is zero." -------------------------

# Pictures (top rank first). Group sizes are listed biggest first.
TOP_DECIDES = [  # Black {4}, White {3, 1}: Black 4, White 3
    "BBBBW...",
    "WWW.....",
    "........",
    "........",
    "........",
    "........",
    "........",
    "........",
]
SECOND_DECIDES = [  # Black {3, 2, 1, 1}, White {3, 1, 1, 1, 1}: tie at 3, Black 2, White 1
    "........",
    "........",
    "BBB.....",
    "WWW.....",
    "BB......",
    "W.......",
    "BWBW....",
    "..W.....",
]
THIRD_DECIDES = [  # Black {4, 3, 2, 1, 1}, White {4, 3, 1, 1, 1, 1}: ties at 4 and 3
    "BBBB....",
    "WWWW....",
    "BBB.....",
    "WWW.....",
    "BB......",
    "W.......",
    "BWBW....",
    "..W.....",
]


def swap_colours(rows: list[str]) -> list[str]:
    return [row.translate(str.maketrans("BW", "WB")) for row in rows]


@pytest.mark.parametrize(
    ("rows", "black_groups", "white_groups", "scores"),
    [
        (TOP_DECIDES, {4: 1}, {3: 1, 1: 1}, (4, 3)),
        (SECOND_DECIDES, {3: 1, 2: 1, 1: 2}, {3: 1, 1: 4}, (2, 1)),
        (THIRD_DECIDES, {4: 1, 3: 1, 2: 1, 1: 2}, {4: 1, 3: 1, 1: 4}, (2, 1)),
        (swap_colours(THIRD_DECIDES), {4: 1, 3: 1, 1: 4}, {4: 1, 3: 1, 2: 1, 1: 2}, (1, 2)),
    ],
)
def test_scores_with_ties_at_the_higher_levels(rows, black_groups, white_groups, scores):
    state = GAME.load(picture_position(rows))
    board = GAME.render(state)
    blacks = " ".join(f"{s}x{n}" for s, n in sorted(black_groups.items(), reverse=True))
    whites = " ".join(f"{s}x{n}" for s, n in sorted(white_groups.items(), reverse=True))
    assert f"Black groups (size x count): {blacks}\n" in board
    assert f"White groups (size x count): {whites}\n" in board
    assert GAME.scores(state) == scores
    assert f"Score now: Black {scores[0]}, White {scores[1]}" in board


# Full 6x6 boards with no engaged piece: finished games.
WHITE_WINS_7_6 = ["BBBBBB", "WWWWWW", "BBBBBB", "WWWWWW", "WBBBBB", "BWWWWW"]
# Left half any colours, right half its mirror with colours exchanged: every size ties.
ALL_TIED = ["BBBWWW", "WWBWBB", "BWBWBW", "BWWBBW", "BBWBWW", "WBWBWB"]


def test_higher_score_wins_a_finished_game():
    # Black {6, 6, 5, 1}, White {7, 6, 5}: White 7 (a group of 7 Black lacks), Black 6.
    state = GAME.load(picture_position(WHITE_WINS_7_6))
    result = GAME.outcome(state)
    assert result is not None
    assert result.scores == (6, 7) and result.winner == 1
    assert result.reason == "higher score: Black 6, White 7"
    flipped = GAME.outcome(GAME.load(picture_position(swap_colours(WHITE_WINS_7_6))))
    assert flipped is not None and flipped.winner == 0


# -- "If both players are tied at zero points, whoever made the last move loses." ----------


@pytest.mark.parametrize(("turn", "winner", "loser"), [("w", 1, "Black"), ("b", 0, "White")])
def test_zero_zero_tie_is_lost_by_whoever_made_the_last_move(turn, winner, loser):
    state = GAME.load(picture_position(ALL_TIED, turn=turn))
    assert GAME.render(state).count("7x1 5x2 1x1") == 2
    result = GAME.outcome(state)
    assert result is not None
    assert result.scores == (0, 0)
    assert result.winner == winner
    assert result.reason == f"both scores are zero; {loser} made the last move"
    assert f"Game over: {GAME.seats[winner]} wins" in GAME.render(state)


def test_the_last_move_is_the_last_placement_or_swap_in_a_played_game():
    # On 5x5, fill the board so that the last move is a placement, then check who lost.
    rng = random.Random(3)
    for _ in range(40):
        state = GAME.new_state(size=5)
        movers = []
        while (mover := GAME.to_move(state)) is not None:
            move = rng.choice(GAME.legal_moves(state))
            if GAME.format_move(state, move) != PIE_TEXT:
                movers.append(mover)
            state = GAME.apply(state, move)
        result = GAME.outcome(state)
        assert result is not None
        if result.scores == (0, 0):
            assert result.winner == 1 - movers[-1]
            return
    pytest.fail("no zero-zero game in 40 random 5x5 games")


# -- pie rule: "White will have the option, on their first turn only, to swap sides" ----


def test_pie_is_offered_only_on_whites_first_turn():
    state = GAME.new_state()
    assert PIE_TEXT not in legal_texts(state)
    with pytest.raises(IllegalMoveError, match="only as White's first move"):
        GAME.parse_move(state, "swap")
    first = play(state, "Bd4+We4")
    assert PIE_TEXT in legal_texts(first)
    assert 'White may answer "swap"' in GAME.render(first)
    second = play(first, "Bb2+Wb3")
    assert PIE_TEXT not in legal_texts(second)
    with pytest.raises(IllegalMoveError, match="only as White's first move"):
        GAME.parse_move(second, "pie")


def test_pie_switch_exchanges_the_players_colours_and_white_moves_next():
    first = play(GAME.new_state(), "Bd4+We4")
    move = GAME.parse_move(first, "SWAP")
    assert GAME.describe_move(first, move).startswith("swap (pie rule")
    switched = GAME.apply(first, move)
    assert switched.cells == first.cells
    assert GAME.player_seats(first) == (0, 1)
    assert GAME.player_seats(switched) == (1, 0)
    assert GAME.to_move(switched) == 1  # White, now held by the first player
    assert GAME.dump(switched).endswith(" w switched")
    assert "Pie switch taken: the first player now holds White" in GAME.render(switched)
    assert PIE_TEXT not in legal_texts(switched)
    after = play(switched, "Bb2+Wb3")
    assert GAME.to_move(after) == 0 and GAME.player_seats(after) == (1, 0)


# -- parse errors, board and position text ---------------------------------------------


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", InvalidMoveError),
        ("hello", InvalidMoveError),
        ("Bz3+Wz4", InvalidMoveError),
        ("Bi1+Wh1", InvalidMoveError),  # i1 is off an 8x8 board
        ("c3<>c4<>c5", InvalidMoveError),
        ("c3<+c4", InvalidMoveError),
    ],
)
def test_text_that_is_not_a_move_is_invalid(text, error):
    with pytest.raises(error) as info:
        GAME.parse_move(GAME.new_state(), text)
    assert f"'{text}'" in str(info.value)


def test_board_has_coordinates_and_fits_72_columns_on_twelve_by_twelve():
    state = play(GAME.new_state(size=12), "Bl12+Wk12", "Ba1+Wa2")
    board = GAME.render(state)
    lines = board.splitlines()
    assert lines[0].split() == list("abcdefghijkl") == lines[13].split()
    assert lines[1].startswith("12  ") and lines[1].endswith("  12")
    assert "O> X<" in lines[1] and lines[11].startswith(" 2  Ov")
    assert max(len(line) for line in lines) <= 72
    assert GAME.render(state, 0) == GAME.render(state, 1) == board  # nothing is hidden


def test_dump_load_round_trip_and_documented_text():
    state = notes_example()
    text = GAME.dump(state)
    assert text == "......../......../......../......../..eW..../..Ew..../......../........ b kept"
    assert GAME.load(text) == state
    assert GAME.load(GAME.dump(play(state, "c3<>c4"))) == play(state, "c3<>c4")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "RANKS TURN SIDES"),
        ("..../..../..../.... b kept", "N ranks of N squares"),
        ("...../...../...../...../..... x kept", "b or w"),
        ("...../...../...../...../..... b maybe", "'kept' or 'switched'"),
        ("...../...../...../...../..Q.. b kept", "one of the letters"),
        ("...../...../...../...../Nn... b kept", "does not point at a piece"),
        ("...../...../...../...../w.... b kept", "does not point at a piece"),
        ("...../...../...../S..../Nw... b kept", "counts must be equal"),
    ],
)
def test_load_rejects_bad_position_text(text, message):
    with pytest.raises(PositionError, match=message):
        GAME.load(text)


def test_help_text_mentions_every_move_form():
    text = GAME.help_text()
    for word in ("Bc3+Wc4", "c3<>c4", "swap", "size=5..12"):
        assert word in text


# -- golden games, replayed by the reference engine ------------------------------------


@pytest.mark.parametrize(
    "path",
    sorted((Path(__file__).parent / "golden").glob("quarod-*.moves")),
    ids=lambda p: p.stem,
)
def test_golden_games_replay_the_same_in_the_reference_engine(path: Path):
    spec = json.loads(path.read_text())
    size = spec["options"].get("size", 8)
    state, ref = GAME.new_state(**spec["options"]), Reference(size)
    for text in spec["moves"]:
        canonical = GAME.format_move(state, GAME.parse_move(state, text))
        assert canonical in ref.moves()
        state = GAME.apply(state, GAME.parse_move(state, text))
        ref.play(canonical)
    assert ref.moves() == set()
    transcript = path.with_suffix(".txt").read_text()
    assert f"position: {ref.board_text()} " in transcript
    black, white = ref.scores()
    assert f"scores [{black}, {white}]" in spec["result"]
    if black == white:
        loser = "Black" if ref.last_mover == "B" else "White"
        assert f"{loser} made the last move" in spec["result"]
