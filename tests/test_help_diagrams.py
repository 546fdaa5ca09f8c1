"""The diagrams of `help GAME` show what the rules engines do: each diagram is read
from the help text, set up on a board and played, and the move's echo and the board
after it must be the ones the help draws."""

from __future__ import annotations

import re

import pytest

from pbm.games import IllegalMoveError, get_game
from pbm.games.quadrature import QuadratureState

FILES = "abcdefghijkl"


def panels(text: str, anchor: str) -> list[dict[str, str]]:
    """The side-by-side boards of the first diagram after the line holding `anchor`:
    one {square: cell} per board, read at the columns of its file letters."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if anchor in line)
    header_at = next(
        i
        for i in range(start, len(lines))
        if re.fullmatch(r"\s+[a-l](?: +[a-l])+(?:\s+[a-l](?: +[a-l])+)*\s*", lines[i])
    )
    header = lines[header_at]
    groups = list(re.finditer(r"[a-l](?: {1,2}[a-l])+", header))
    boards: list[dict[str, str]] = [{} for _ in groups]
    for line in lines[header_at + 1 :]:
        if not re.match(r"\s*\d{1,2} ", line):
            break
        ranks = list(re.finditer(r"(?<!\S)(\d{1,2}) ", line))
        for index, group in enumerate(groups):
            rank = next(r.group(1) for r in reversed(ranks) if r.start() < group.start())
            for letter in re.finditer(r"[a-l]", group.group()):
                column = group.start() + letter.start()
                cell = line[column : column + 2].strip() if column < len(line) else ""
                boards[index][f"{letter.group()}{rank}"] = cell or "."
    return boards


# -- Quadrature: squares, chain reaction, no suicide, the home plate ------------------

QUADRATURE = get_game("quadrature")
# Four men of each side in the corners, so that neither army is down to two men.
FILLERS = {sq: "#" for sq in ("a1", "b1", "j1", "k1")} | {
    sq: "O" for sq in ("a11", "b11", "j11", "k11")
}


def quadrature_state(board: dict[str, str]) -> QuadratureState:
    cells = {**FILLERS, **{sq: c for sq, c in board.items() if c in "#O"}}
    ranks = []
    for rank in range(11, 0, -1):
        ranks.append("".join(cells.get(f"{f}{rank}", ".") for f in FILES[:11]))
    return QUADRATURE.load("/".join(ranks) + " b 0 0 threefold")


def quadrature_cells(state: QuadratureState) -> dict[str, str]:
    text = QUADRATURE.render(state)
    [board] = panels(text, "a b c d e f g h i j k")
    return {sq: c.replace(",", ".") for sq, c in board.items()}


@pytest.mark.parametrize(
    ("anchor", "move", "echo"),
    [
        ("SQUARING.", "d2-d3", "d2-d3 converts f5"),
        ("CHAIN REACTION.", "b6-c6", "b6-c6 converts d4 f2"),
    ],
)
def test_quadrature_conversions_are_what_the_help_draws(anchor: str, move: str, echo: str):
    text = QUADRATURE.help_text()
    before, *_middle, after = panels(text, anchor)
    assert f'"{echo}"' in " ".join(text.split())
    state = quadrature_state(before)
    played = QUADRATURE.parse_move(state, move)
    assert QUADRATURE.describe_move(state, played) == echo
    cells = quadrature_cells(QUADRATURE.apply(state, played))
    assert {sq: cells[sq] for sq in after} == after


def test_quadrature_suicide_and_home_plate_diagrams():
    text = QUADRATURE.help_text()
    [suicide] = panels(text, "NO SUICIDE.")
    with pytest.raises(IllegalMoveError, match="suicide"):
        QUADRATURE.parse_move(quadrature_state(suicide), "d2-d3")
    [plate] = panels(text, "WINNING.")
    start = quadrature_state(plate)
    state = QUADRATURE.apply(start, QUADRATURE.parse_move(start, "f10-f11"))
    result = QUADRATURE.outcome(state)
    assert result is not None and result.winner == 0 and "home plate" in result.reason


# -- Quad: a capture ------------------------------------------------------------------

QUAD = get_game("quad")


def test_quad_capture_is_what_the_help_draws():
    text = QUAD.help_text()
    before, after = panels(text, "MOVES.")
    whites, blacks = (sum(c == side for c in before.values()) for side in "OX")
    # In the move phase with every counter down: the rest of each side's counters on
    # the far corners, where they touch nothing.
    spare = {
        "O": ["a8", "h8", "a1", "h1", "a7", "h7", "b8", "g8", "a2", "h2"],
        "X": ["d8", "e1", "a4", "h4", "a5", "h5", "c1", "f1", "c8", "f8"],
    }
    cells = dict(before)
    for side, count in (("O", whites), ("X", blacks)):
        for square in spare[side][: 12 - count]:
            cells[square] = side
    ranks = []
    for rank in range(8, 0, -1):
        row = "".join(cells.get(f"{f}{rank}", ".") for f in FILES[:8])
        ranks.append(re.sub(r"\.+", lambda m: str(len(m.group())), row))
    state = QUAD.load(f"12 24/1000 o 0/0 {'/'.join(ranks)} -")
    move = QUAD.parse_move(state, "c5-d5")
    assert QUAD.describe_move(state, move) == "c5-d5 x d4 d6"
    assert '"c5-d5 x d4 d6"' in text
    [drawn] = panels(QUAD.render(QUAD.apply(state, move)), "a b c d e f g h")
    assert {sq: drawn[sq] for sq in after} == after


# -- Quarod: a placement and a swap -----------------------------------------------------

QUAROD = get_game("quarod")


def test_quarod_diagrams_are_what_the_engine_draws():
    text = QUAROD.help_text()
    state = QUAROD.new_state(size=5)
    _empty, placed = panels(text, "PLACE a black")
    after_place = QUAROD.apply(state, QUAROD.parse_move(state, "Bc3+Wd3"))
    [drawn] = panels(QUAROD.render(after_place), "a  b  c  d  e")
    assert {sq: drawn[sq] for sq in placed} == placed
    before, after = panels(text, "SWAP two adjacent")
    for move in ("Bb2+Wc2", "Bc3+Wc4"):
        state = QUAROD.apply(state, QUAROD.parse_move(state, move))
    [drawn] = panels(QUAROD.render(state), "a  b  c  d  e")
    assert {sq: drawn[sq] for sq in before} == before
    state = QUAROD.apply(state, QUAROD.parse_move(state, "c2<>c3"))
    [drawn] = panels(QUAROD.render(state), "a  b  c  d  e")
    assert {sq: drawn[sq] for sq in after} == after


# -- Quarto: a quarto in a row ------------------------------------------------------------

QUARTO = get_game("quarto")


def test_quarto_row_of_the_help_is_a_quarto():
    text = QUARTO.help_text()
    row = re.search(r"1 \|\*(\w{4})\*\|\*(\w{4})\*\|\*(\w{4})\*\|\*(\w{4})\*\|", text)
    assert row is not None
    a, b, c, d = row.groups()
    state = QUARTO.new_state()
    # First gives a; each placement on row 1 gives the next piece (fillers elsewhere
    # would only be needed if a placement made a quarto early: these four do not).
    moves = [f"give {a}", f"a1 {b}", f"b1 {c}", f"c1 {d}", "d1"]
    for text_move in moves:
        state = QUARTO.apply(state, QUARTO.parse_move(state, text_move))
    result = QUARTO.outcome(state)
    assert result is not None and "row 1" in result.reason and "light" in result.reason
