"""Quarto (Blaise Müller, Gigamic): the opponent chooses the piece you place.

Rules: Quarto rules, Blaise Müller (Gigamic), with pbm's decisions (quartos are detected
automatically, and the player named first gives the first piece: docs/games/quarto.md,
'Decisions where the rules are silent or physical'). docs/games/quarto.md is the
player-facing description.

Representation, chosen for speed: a state is a named tuple of small values; a move is
one int `square << 5 | give`, where NONE (16) in either field means "no square" (the
opening give) or "no give" (a placement that ends the game). Quartos are found with the
packed counters of `quarto_lines`: one addition and one AND per candidate square.
"""

from __future__ import annotations

import re
from operator import itemgetter
from typing import Any, NamedTuple, TypeAlias

from pbm.games.base import (
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Option,
    OptionError,
    Outcome,
    PositionError,
)
from pbm.games.grid import FILES, square_names
from pbm.games.quarto_lines import SIZE, SQUARES, Variant, variant
from pbm.games.quarto_pieces import (
    ALL_ATTRIBUTES,
    ALL_WORD,
    ATTRIBUTE_BITS,
    CODES,
    KEY,
    PIECES,
    VALUE_WORDS,
    attributes_mask,
    attributes_text,
    parse_attributes,
    parse_piece,
)

# The game's API for bots and pictures: the rules' values and, re-exported here, the
# fast board facts they search and draw with (docs/protocol.md, "Board API"). Bots
# and pictures import them from this module, never from `quarto_lines` or
# `quarto_pieces`, so the board's representation can change behind this list
# (tests/test_layers.py holds them to it).
__all__ = [
    "ALL_ATTRIBUTES",
    "ATTRIBUTE_BITS",
    "CODES",
    "EMPTY",
    "GAME",
    "NONE",
    "PIECES",
    "PLACE_ONLY",
    "SIZE",
    "SQUARES",
    "VALUE_WORDS",
    "Quarto",
    "QuartoMove",
    "QuartoState",
    "Variant",
    "attributes_text",
]

EMPTY = -1  # no piece: an empty square, or nothing held
NONE = 16  # the "no square" / "no give" field of a move
RUNNING, DRAW = -1, 2  # `result` values besides the winning seat (0 or 1)

# `square << 5 | give`, NONE in a field that does not apply (see the module docstring).
QuartoMove: TypeAlias = int

NAMES = square_names(SIZE, SIZE)
PLACE_GIVE = tuple(tuple(s << 5 | g for g in PIECES) for s in SQUARES)
PLACE_ONLY = tuple(s << 5 | NONE for s in SQUARES)

_MOVE = re.compile(r"(?P<square>[a-z]\d{1,2})?(?:give)?(?P<piece>[a-z]{4}|[01]{4})?")
_SEPARATORS = re.compile(r"[\s\-:/]+")


class QuartoState(NamedTuple):
    """A Quarto position. Only board, held and variant are free; the rest follows."""

    board: tuple[int, ...]  # piece on each square index, EMPTY where none
    held: int  # the piece the player to move places; EMPTY before the first give and at the end
    unused: tuple[int, ...]  # pieces neither on the board nor held, ascending
    empties: tuple[int, ...]  # empty squares, ascending
    sums: int  # packed group counters of the board (quarto_lines)
    result: int  # RUNNING, DRAW, or the seat that made a quarto
    variant: Variant


# Building the named tuple from a plain tuple skips its keyword-handling constructor.
_new = tuple.__new__


def _opening(var: Variant) -> QuartoState:
    return QuartoState((EMPTY,) * len(SQUARES), EMPTY, PIECES, SQUARES, 0, RUNNING, var)


class Quarto(Game[QuartoState, QuartoMove]):
    name = "quarto"
    title = "Quarto"
    aliases = ()
    # pbm's decision (docs/games/quarto.md, 'Rules'): the player named first gives first.
    seats = ("First", "Second")
    options = (
        Option(
            "advanced",
            "bool",
            False,
            "advanced variant: the nine 2x2 squares also win",
        ),
        Option(
            "attributes",
            "list",
            ALL_WORD,
            "beginners' variant: only these 1 to 3 of height, colour, shape, top count",
            parse=parse_attributes,
        ),
    )
    summary = """\
Quarto (Blaise Müller) is played on a 4x4 board with 16 pieces. Each
piece is tall or short, light or dark, round or square, hollow or
filled: every combination once. The board names a piece by four
letters, one for each of these:

  height  T tall    S short
  colour  L light   D dark
  shape   R round   Q square
  top     H hollow  F filled

TLRH is tall, light, round and hollow; SDQF short, dark, square and
filled.

You do not choose the piece you place: your opponent does. First opens
the game by giving Second a piece. Then each turn you place the piece
you were given on any empty square and give your opponent one of the
pieces left.

Whoever completes a row, a column or a long diagonal of four pieces
that share at least one attribute (four tall, four dark, ...) wins at
once, whoever placed the other three. Here SLQF placed on d1 wins: all
four pieces of row 1 are light (the board marks them with *):

       a      b      c      d
    +------+------+------+------+
  1 |*TLRH*|*SLRF*|*TLQH*|*SLQF*|  1
    +------+------+------+------+

Quartos are found automatically: there is nothing to call. If all 16
pieces are placed without a quarto, the game is drawn.

Advanced variant (-advanced=yes): the nine 2x2 squares of the board
win too. Beginners' variant (e.g. -attributes=colour): only the 1 to 3
attributes named count."""
    notation = """\
Pieces are four letters, one per attribute in the order height,
colour, shape, top: T/S, L/D, R/Q, H/F (e.g. TLRH or SDQF). Four bits
in the same order also work (1 = the first letter: 1111 = TLRH,
0000 = SDQF).
  give TLRH   the first move of the game: give your opponent TLRH
              (also /TLRH)
  b2 SDQF     place the piece you hold on b2, then give SDQF
              (also b2/SDQF)
  b2          a placement that wins or fills the board gives nothing"""
    example_options = (
        {},
        {"advanced": True},
        {"attributes": "colour"},
        {"advanced": True, "attributes": "height,shape"},
    )

    # -- positions ------------------------------------------------------------
    def new_state(self, **options: Any) -> QuartoState:
        resolved = self.resolve_options(options)
        chosen = resolved["attributes"]
        if not isinstance(chosen, str):
            raise OptionError(f"option attributes: {chosen!r} is not valid (expected text)")
        return _opening(variant(resolved["advanced"], attributes_mask(chosen)))

    def state_options(self, state: QuartoState) -> dict[str, Any]:
        var = state.variant
        return {"advanced": var.advanced, "attributes": attributes_text(var.attributes)}

    def to_move(self, state: QuartoState) -> int | None:
        if state.result != RUNNING:
            return None
        # Ply parity: pieces placed, plus one once the first piece has been given.
        return (len(SQUARES) - len(state.empties) + (state.held != EMPTY)) & 1

    def legal_moves(self, state: QuartoState) -> list[QuartoMove]:
        _, held, unused, empties, sums, result, var = state
        if result != RUNNING:
            return []
        if held == EMPTY:  # the opening: give any piece
            return [NONE << 5 | p for p in unused]
        fours = var.fours
        if len(unused) > 1:
            pick = itemgetter(*unused)
            moves: list[QuartoMove] = []
            if not (sums + var.add_everywhere[held]) & fours:
                # No group holds three pieces sharing a value with the held piece.
                for s in empties:
                    moves += pick(PLACE_GIVE[s])
                return moves
            add = var.add[held]
            for s in empties:
                # A placement that wins ends the game, so it gives nothing (task, 3.4).
                if (sums + add[s]) & fours:
                    moves.append(PLACE_ONLY[s])
                else:
                    moves += pick(PLACE_GIVE[s])
            return moves
        add = var.add[held]
        if unused:  # the 15th placement gives the last piece unless it wins
            last = unused[0]
            return [
                PLACE_ONLY[s] if (sums + add[s]) & fours else PLACE_GIVE[s][last] for s in empties
            ]
        return [PLACE_ONLY[s] for s in empties]  # the 16th placement gives nothing

    def apply(self, state: QuartoState, move: QuartoMove) -> QuartoState:
        board, held, unused, empties, sums, result, var = state
        square = move >> 5
        give = move & 31
        if result != RUNNING:
            raise IllegalMoveError(str(move), "the game is over")
        if held == EMPTY and square != NONE:
            raise IllegalMoveError(str(move), "the first move gives a piece and places none")
        try:
            if held == EMPTY:
                i = unused.index(give)
                return _new(
                    QuartoState,
                    (board, give, unused[:i] + unused[i + 1 :], empties, 0, RUNNING, var),
                )
            i = empties.index(square)
            empties = empties[:i] + empties[i + 1 :]
            board = (*board[:square], held, *board[square + 1 :])
            sums += var.add[held][square]
            if sums & var.fours:  # quarto: the placer wins (Quarto rules, "Winning the game")
                placer = (len(SQUARES) - len(empties)) & 1
                return _new(QuartoState, (board, EMPTY, unused, empties, sums, placer, var))
            if not empties:  # all 16 placed without a quarto (Quarto rules: "Game even")
                return _new(QuartoState, (board, EMPTY, (), (), sums, DRAW, var))
            i = unused.index(give)
            return _new(
                QuartoState,
                (board, give, unused[:i] + unused[i + 1 :], empties, sums, RUNNING, var),
            )
        except ValueError:  # the square is taken or the piece to give is not available
            raise IllegalMoveError(str(move), "not a legal move here") from None

    def outcome(self, state: QuartoState) -> Outcome | None:
        if state.result == RUNNING:
            return None
        if state.result == DRAW:
            return Outcome(None, "all 16 pieces placed without a quarto")
        return Outcome(state.result, "quarto: " + self._quarto_text(state))

    @staticmethod
    def _quarto_groups(state: QuartoState) -> list[str]:
        """Each completed group and what its pieces share, e.g. `row 2 all tall`."""
        quartos = state.variant.quartos(state.sums)
        return [f"{group} all {_and_list(words)}" for group, _, words in quartos]

    def _quarto_text(self, state: QuartoState) -> str:
        return "; ".join(self._quarto_groups(state))

    # -- notation --------------------------------------------------------------
    def answer_example(self, state: QuartoState) -> str:
        if state.held == EMPTY:
            return "give TLRH"
        # A placement that gives a piece still free (never the one being placed).
        texts = (self.format_move(state, m) for m in self.legal_moves(state))
        gives = [t for t in texts if " " in t]
        preferred = ("b2 SDQF", "b2 TLRH")
        return next((t for t in preferred if t in gives), gives[0] if gives else "b2 SDQF")

    def format_move(self, state: QuartoState, move: QuartoMove) -> str:
        square, give = move >> 5, move & 31
        if square == NONE:
            return f"give {CODES[give]}"
        if give == NONE:
            return NAMES[square]
        return f"{NAMES[square]} {CODES[give]}"

    def describe_move(self, state: QuartoState, move: QuartoMove) -> str:
        text = self.format_move(state, move)
        square, give = move >> 5, move & 31
        if square == NONE:
            return text
        after = self.apply(state, move)
        placed = f"{CODES[state.held]} on {NAMES[square]}"
        if after.result == DRAW:
            return f"{text}: places {placed}, the board is full"
        if after.result != RUNNING:
            return f"{text}: places {placed}, QUARTO! {self._quarto_text(after)}"
        return f"{text}: places {placed}, gives {CODES[give]}"

    def parse_move(self, state: QuartoState, text: str) -> QuartoMove:
        found = _MOVE.fullmatch(_SEPARATORS.sub("", text.lower()))
        if not found or not (found["square"] or found["piece"] or "give" in text.lower()):
            raise InvalidMoveError(text, "write give TLRH, b2 SDQF or b2")
        square = None
        if found["square"]:
            if found["square"] not in NAMES:
                raise InvalidMoveError(text, f"{found['square']} is not a square (a1 to d4)")
            square = NAMES.index(found["square"])
        piece = None
        if found["piece"]:
            try:
                piece = parse_piece(found["piece"])
            except ValueError as exc:
                reason = f"{found['piece'].upper()} is not a piece: {exc}"
                raise InvalidMoveError(text, reason) from None
        return self._checked_move(state, text, square, piece)

    def _checked_move(
        self, state: QuartoState, text: str, square: int | None, piece: int | None
    ) -> QuartoMove:
        """The legal move for a parsed square and piece, or the reason there is none."""
        if state.result != RUNNING:
            raise IllegalMoveError(text, "the game is over")
        if state.held == EMPTY:
            if square is not None:
                raise IllegalMoveError(text, "the first move only gives a piece: give TLRH")
            if piece is None:
                raise IllegalMoveError(text, "say which piece you give: give TLRH")
            return NONE << 5 | piece
        held = CODES[state.held]
        if square is None:
            first = NAMES[state.empties[0]]
            if not state.unused:
                raise IllegalMoveError(text, f"place {held} on the last empty square: {first}")
            example = f"{first} {CODES[state.unused[0]]}"
            reason = f"first place {held} on an empty square, then give a piece: {example}"
            raise IllegalMoveError(text, reason)
        if state.board[square] != EMPTY:
            raise IllegalMoveError(text, f"{NAMES[square]} is occupied")
        var = state.variant
        if (state.sums + var.add[state.held][square]) & var.fours:
            # The placement wins and the game ends; a piece named to give is moot.
            if piece is not None:
                self._check_give(text, state, piece)
            return PLACE_ONLY[square]
        if len(state.empties) == 1:
            if piece is not None:
                raise IllegalMoveError(text, "no pieces are left to give: write just the square")
            return PLACE_ONLY[square]
        if piece is None:
            example = f"{NAMES[square]} {CODES[state.unused[0]]}"
            raise IllegalMoveError(
                text, f"{NAMES[square]} does not win, so give a piece too: {example}"
            )
        self._check_give(text, state, piece)
        return PLACE_GIVE[square][piece]

    @staticmethod
    def _check_give(text: str, state: QuartoState, piece: int) -> None:
        if piece == state.held:
            raise IllegalMoveError(text, f"{CODES[piece]} is the piece you are placing")
        if piece not in state.unused:
            raise IllegalMoveError(text, f"{CODES[piece]} is already on the board")

    # -- the board -------------------------------------------------------------
    def render(self, state: QuartoState, seat: int | None = None, *, headline: bool = True) -> str:
        # Nothing in Quarto is hidden, so every seat sees the same board.
        quartos = state.variant.quartos(state.sums)
        winning = {s for _, squares, _ in quartos for s in squares}
        letters = "    " + "".join(f"   {FILES[f]}   " for f in range(SIZE)).rstrip()
        rule = "    +" + "------+" * SIZE
        lines = [letters, rule]
        for rank in range(SIZE - 1, -1, -1):
            cells = []
            for f in range(SIZE):
                square = rank * SIZE + f
                piece = state.board[square]
                body = "...." if piece == EMPTY else CODES[piece]
                cells.append(f"*{body}*" if square in winning else f" {body} ")
            lines.append(f"  {rank + 1} |" + "|".join(cells) + f"|  {rank + 1}")
            lines.append(rule)
        lines.append(letters)
        lines += ["  " + line for line in self._status(state, headline)]
        lines += ["  " + line for line in KEY]
        return "\n".join(lines) + "\n"

    def headline(self, state: QuartoState) -> list[str]:
        if state.result == DRAW:
            return ["Draw: all 16 pieces placed without a quarto."]
        if state.result != RUNNING:
            groups = self._quarto_groups(state)
            winner = f"QUARTO! {self.seats[state.result]} wins:"
            if len(groups) == 1:
                return [f"{winner} {groups[0]}"]
            # One group a line keeps the board within 72 columns.
            return [winner] + [f"  {group}" for group in groups]
        if state.held == EMPTY:
            return [f"To give ({self.seats[0]}): any piece"]
        return [f"To place ({self.seats[self.to_move(state) or 0]}): {CODES[state.held]}"]

    def _status(self, state: QuartoState, headline: bool) -> list[str]:
        """The lines under the board: the variant's notes, the headline (if asked
        for) and the pieces not yet used."""
        var = state.variant
        status = []
        if var.advanced:
            status.append("Advanced: the nine 2x2 squares also win.")
        if var.attributes != ALL_ATTRIBUTES:
            names = attributes_text(var.attributes).split(",")
            verb = "counts" if len(names) == 1 else "count"
            status.append(f"Beginners: only {_and_list(names)} {verb}.")
        if headline:
            status += self.headline(state)
        if state.unused:
            codes = [CODES[p] for p in state.unused]
            head = f"Unused ({len(codes)}): "
            for start in range(0, len(codes), 8):
                status.append(head + " ".join(codes[start : start + 8]))
                head = " " * len(head)
        return status

    # -- position text -----------------------------------------------------------
    def dump(self, state: QuartoState) -> str:
        """`RANK4/RANK3/RANK2/RANK1 HELD advanced=yes|no attributes=TEXT` (docs/games)."""
        ranks = []
        for rank in range(SIZE - 1, -1, -1):
            row = state.board[rank * SIZE : rank * SIZE + SIZE]
            ranks.append("".join("." if p == EMPTY else CODES[p] for p in row))
        held = "-" if state.held == EMPTY else CODES[state.held]
        var = state.variant
        advanced = "yes" if var.advanced else "no"
        counted = attributes_text(var.attributes)
        return f"{'/'.join(ranks)} {held} advanced={advanced} attributes={counted}"

    def load(self, text: str) -> QuartoState:
        words = text.split()
        if len(words) < 2:
            raise PositionError(f"'{text}' is not a Quarto position: BOARD HELD [options]")
        try:
            options = self.resolve_options(dict(_option_pair(w) for w in words[2:]))
        except OptionError as exc:
            raise PositionError(f"'{text}': {exc}") from None
        var = variant(options["advanced"], attributes_mask(options["attributes"]))
        board = _read_board(text, words[0])
        held = EMPTY if words[1] == "-" else _read_piece(text, words[1])
        placed = [p for p in board if p != EMPTY]
        if len({*placed, held}) != len(placed) + 1:
            raise PositionError(f"'{text}': a piece appears twice")
        return _position(text, board, held, var)


def _and_list(words: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


def _option_pair(word: str) -> tuple[str, str]:
    name, sep, value = word.partition("=")
    if not sep:
        raise OptionError(f"'{word}' is not an option (name=value)")
    return name, value


def _read_piece(text: str, word: str) -> int:
    try:
        return parse_piece(word)
    except ValueError as exc:
        raise PositionError(f"'{text}': {word} is not a piece ({exc})") from None


def _read_board(text: str, word: str) -> tuple[int, ...]:
    ranks = word.split("/")
    if len(ranks) != SIZE:
        raise PositionError(f"'{text}': the board is {SIZE} ranks separated by '/'")
    board = [EMPTY] * len(SQUARES)
    for row, rank_text in enumerate(ranks):
        rank = SIZE - 1 - row
        cells: list[int] = []
        i = 0
        while i < len(rank_text):
            if rank_text[i] == ".":
                cells.append(EMPTY)
                i += 1
            else:
                cells.append(_read_piece(text, rank_text[i : i + 4]))
                i += 4
        if len(cells) != SIZE:
            raise PositionError(f"'{text}': rank {rank + 1} does not hold {SIZE} squares")
        board[rank * SIZE : rank * SIZE + SIZE] = cells
    return tuple(board)


def _position(text: str, board: tuple[int, ...], held: int, var: Variant) -> QuartoState:
    """The state of a board and held piece, checked to be reachable in play."""
    empties = tuple(s for s in SQUARES if board[s] == EMPTY)
    placed = len(SQUARES) - len(empties)
    unused = tuple(p for p in PIECES if p not in board and p != held)
    sums = var.counters(board, EMPTY)
    quartos = var.quartos(sums)
    if quartos:
        # One placement ends the game, so every quarto runs through the last square filled.
        common = set(SQUARES).intersection(*(set(squares) for _, squares, _ in quartos))
        if not common:
            raise PositionError(f"'{text}': separate quartos cannot arise in one game")
        result = placed & 1
    elif not empties:
        result = DRAW
    else:
        result = RUNNING
    if result != RUNNING and held != EMPTY:
        raise PositionError(f"'{text}': the game is over, so no piece is held")
    if result == RUNNING and placed and held == EMPTY:
        raise PositionError(f"'{text}': a running game after a placement has a held piece")
    return QuartoState(board, held, unused, empties, sums, result, var)


GAME = Quarto()
