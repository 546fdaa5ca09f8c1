"""Boards in words (`set ... format words`, issue 26): every game's words round-trip.

The parser below belongs to the tests alone: it reads the sentences pbm writes back into
squares, pieces and counts, and each game's check compares them with the state's own
fields (not with the view the words were made from)."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from pbm.games import get_game
from pbm.games import quadrature_board as qb
from pbm.games.grid import square_name
from pbm.games.quad_board import SIZE as QUAD_SIZE
from pbm.games.quad_board import squares_of
from pbm.games.quadrupel import DOTTED
from pbm.games.quarod_board import colour_of, rod_of
from pbm.games.quarto import EMPTY
from pbm.games.quarto_pieces import ATTRIBUTE_BITS, CODES, PIECES, VALUE_WORDS
from pbm.services.play import words

PLAYERS = ("alice", "bob")
GROUP = re.compile(r"^(?P<group>[A-Z][^,:]*), (?P<count>\d+): (?P<items>.*)\.$")
ROW = re.compile(r"^row (\d+): ([a-z0-9 ]+)$")


@dataclass
class Read:
    """A position as read back from its words."""

    status: str
    groups: dict[str, dict[str, str]] = field(default_factory=dict)  # group: square: detail
    notes: list[str] = field(default_factory=list)


def read(lines: Sequence[str]) -> Read:
    """The words of `words.position` read back; every line is a sentence."""
    assert lines and all(line.endswith(".") for line in lines), lines
    found = Read(status=lines[0].removesuffix("."))
    for line in lines[1:]:
        match = GROUP.match(line)
        if match is None or line.startswith(("Sides:", "Unused", "To place")):
            found.notes.append(line.removesuffix("."))
            continue
        squares: dict[str, str] = {}
        items = match.group("items")
        for item in items.split("; ") if items != "none" else ():
            row = ROW.match(item)
            if row is not None:
                for square in row.group(2).split():
                    assert int(square[1:]) == int(row.group(1)), item
                    squares[square] = ""
            else:
                square, _, detail = item.partition(" ")
                squares[square] = detail
        assert int(match.group("count")) == len(squares), line
        found.groups[match.group("group")] = squares
    return found


def group_of(read_back: Read, side: str) -> dict[str, str]:
    """The one group whose name starts with the side's name ("Black men")."""
    (name,) = [g for g in read_back.groups if g.startswith(side)]
    return read_back.groups[name]


def note(read_back: Read, start: str) -> str:
    (line,) = [n for n in read_back.notes if n.startswith(start)]
    return line


def positions(name: str, options: dict[str, Any], seed: int, plies: int) -> Iterator[Any]:
    """Every position of a random game of `plies` moves at most."""
    game = get_game(name)
    state = game.new_state(**game.resolve_options(options))
    rng = random.Random(seed)
    yield state
    for _ in range(plies):
        if game.outcome(state) is not None:
            return
        state = game.apply(state, rng.choice(game.legal_moves(state)))
        yield state


def status_names_the_player(name: str, state: Any, status: str) -> None:
    game = get_game(name)
    seat = game.to_move(state)
    if game.outcome(state) is not None:
        assert status.startswith("Game over"), status
    else:
        assert seat is not None  # a running game has a player to move
        order = list(game.player_seats(state))
        assert status.startswith(PLAYERS[order.index(seat)] + " to "), status


def check_quarto(state: Any, back: Read, seat: int | None) -> None:
    board = back.groups["Pieces on the board"]
    expected = {square_name(i, 4): CODES[p] for i, p in enumerate(state.board) if p != EMPTY}
    assert {s: d.partition(":")[0] for s, d in board.items()} == expected
    for detail in board.values():
        code, _, attributes = detail.partition(": ")
        piece = PIECES[CODES.index(code)]
        said = [VALUE_WORDS[i][0 if piece & bit else 1] for i, bit in enumerate(ATTRIBUTE_BITS)]
        assert attributes.split(", ") == said
    unused = note(back, "Unused pieces").partition(": ")[2]
    assert ([] if unused == "none" else unused.split()) == [CODES[p] for p in state.unused]
    placing = [n for n in back.notes if n.startswith("To place: ")]
    held = [n.removeprefix("To place: ").partition(":")[0] for n in placing]
    assert held == ([] if state.held == EMPTY else [CODES[state.held]])
    assert not any(n.startswith("Seen from above") for n in back.notes)


def check_quadrature(state: Any, back: Read, seat: int | None) -> None:
    for side, men, label in ((qb.BLACK, state.black, "Black"), (qb.WHITE, state.white, "White")):
        squares = {square_name(f + r * qb.SIZE, qb.SIZE) for f, r in map(qb.point, qb.bits(men))}
        assert set(group_of(back, label)) == squares
        counts = re.findall(r"\d+", note(back, f"{label}:"))
        assert [int(c) for c in counts] == [
            len(squares),
            qb.MEN - len(squares),
            state.markers[side],
        ]


def check_quadrupel(state: Any, back: Read, seat: int | None) -> None:
    dotted = state.rules.variant in DOTTED
    for owner, label in ((0, "Black"), (1, "White")):
        stones = group_of(back, label)
        expected = {}
        for i, code in enumerate(state.cells):
            if code and (code - 1) & 1 == owner:
                expected[square_name(i, 6)] = (code - 1) >> 1
        assert set(stones) == set(expected)
        hidden = dotted and bool(state.pending & (1 << owner) or (state.pending and seat != owner))
        for square, dots in expected.items():
            detail = stones[square]
            if not dotted:
                assert detail == ""
            elif hidden:
                assert detail == "dots not shown yet", (square, detail)
            elif state.rules.variant == "position":
                assert detail == ("marked 1" if dots else "blank")
            else:
                assert int(detail.split()[0]) == dots


def check_quad(state: Any, back: Read, seat: int | None) -> None:
    for side, counters, label in ((0, state.white, "White"), (1, state.black, "Black")):
        assert set(group_of(back, label)) == {
            square_name(s, QUAD_SIZE) for s in squares_of(counters)
        }
        hand = int(note(back, f"{label}:").split()[1])
        assert hand == state.hands[side]


def check_quarod(state: Any, back: Read, seat: int | None) -> None:
    rods = ("north", "east", "south", "west")
    for colour, label in ((0, "Black"), (1, "White")):
        expected = {
            square_name(i, state.size): (
                f"rod {rods[rod_of(cell)]}, "
                + ("engaged" if state.engaged >> i & 1 else "not engaged")
            )
            for i, cell in enumerate(state.cells)
            if cell and colour_of(cell) == colour
        }
        assert group_of(back, label) == expected


CHECKS = {
    "quarto": check_quarto,
    "quadrature": check_quadrature,
    "quadrupel": check_quadrupel,
    "quad": check_quad,
    "quarod": check_quarod,
}
CASES = [(name, options) for name in CHECKS for options in get_game(name).example_options]


@pytest.mark.parametrize(("name", "options"), CASES, ids=[f"{n}-{o}" for n, o in CASES])
def test_words_round_trip(name: str, options: dict[str, Any]) -> None:
    game = get_game(name)
    seen = 0
    for seed in range(3):
        for state in positions(name, dict(options), seed, 60):
            for seat in (None, 0, 1):
                lines = words.position(game, state, seat=seat, players=PLAYERS)
                back = read(lines)
                status_names_the_player(name, state, back.status)
                CHECKS[name](state, back, seat)
                assert not any(set(line) <= set("-+|. ") for line in lines)  # no drawing
                seen += 1
    assert seen > 9


def test_words_read_the_groups_by_row() -> None:
    game = get_game("quadrature")
    lines = words.position(game, game.new_state(), seat=None, players=PLAYERS)
    black = next(line for line in lines if line.startswith("Black men"))
    assert black.startswith("Black men, 9: row 3: b3 c3 d3 e3 f3 g3 h3 i3 j3.")
