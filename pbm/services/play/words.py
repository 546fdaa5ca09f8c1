"""Boards in words (`set USER PASSWORD format words`): the position as sentences a
screen reader reads well, with no drawing in characters.

The words come from the same typed view of a position as the drawn board
(`pbm.pictures.view`: what each square holds, by group, as the reader's seat may see
it), so a hidden setup stays as hidden as in the picture. Most useful first: whose turn
it is, then each side's pieces row by row, then what is off the board (reserves, hands,
the piece to place).
"""

from __future__ import annotations

from collections.abc import Sequence

from pbm.games import AnyGame
from pbm.games.base import State
from pbm.pictures.picture import View, view
from pbm.services.play.picture_words import picture_words
from pbm.services.play.secrecy import ShownMove, shown_echo
from pbm.texts import phrase

FORMAT = "words"
LISTED_MAX = 40  # items one sentence lists before it says how many more


def position(
    game: AnyGame,
    state: State,
    *,
    seat: int | None,
    players: Sequence[str] = (),
    headline: bool = True,
) -> list[str]:
    """The position for the viewer at `seat` (None: an observer), one sentence a line:
    the status, each group of pieces, who holds which side, the notes. Without
    `headline`, no status: a finished board's mail or page says its result, and the
    rules of a resigned board would still say who is to move."""
    shown = view(game, state, seat=seat, words=picture_words(), players=players)
    lines = [sentence(shown.status)] if headline else []
    lines += [group_line(shown, group) for group in shown.groups]
    if shown.shows_sides and players:
        sides = ", ".join(f"{game.seat_name(s)}: {n}" for s, n in enumerate(shown.names))
        lines.append(sentence(phrase("words_sides", sides=sides)))
    key = set(shown.drawing_key())
    lines += [sentence(note) for note in shown.notes() if note not in key]
    return lines


def squares_by_row(shown: View, group: str) -> list[str]:
    """The squares of `group`, row 1 first, each row from file a."""
    squares = [s for s, piece in shown.pieces.items() if piece.group == group]
    return sorted(squares, key=lambda s: (int(s[1:]), s[0]))


def group_line(shown: View, group: str) -> str:
    """ "White men, 3: row 1: a1 c1; row 2: b2." or, where a piece has something to tell
    besides its square, each square with it: "Pieces on the board, 1: c3 TLRH: tall, ..."."""
    squares = squares_by_row(shown, group)
    if not squares:
        return sentence(phrase("words_group_none", group=group))
    details = [shown.pieces[s].detail for s in squares]
    if any(details):
        items = "; ".join(f"{s} {d}".rstrip() for s, d in zip(squares, details, strict=True))
    else:
        rows: dict[str, list[str]] = {}
        for square in squares:
            rows.setdefault(square[1:], []).append(square)
        items = "; ".join(
            phrase("words_row", row=row, squares=" ".join(found)) for row, found in rows.items()
        )
    return sentence(phrase("words_group", group=group, count=len(squares), items=items))


def move_list(moves: Sequence[ShownMove], userids: Sequence[str], hidden: set[int]) -> str:
    """The moves as one sentence, each with its number, its player and its echo."""
    if not moves:
        return phrase("words_no_moves")
    items = "; ".join(
        f"{m.number} {userids[m.player]} {shown_echo(m, hidden)}" + (" (Auto)" if m.auto else "")
        for m in moves
    )
    return sentence(phrase("words_moves", moves=items))


def listed(items: Sequence[str], separator: str = ", ") -> str:
    """The first LISTED_MAX items joined, then how many more there are."""
    more = len(items) - LISTED_MAX
    said = separator.join(items[:LISTED_MAX])
    return said + (phrase("ask_more", count=more) if more > 0 else "")


def sentence(text: str) -> str:
    """`text` ending with a full stop (a screen reader pauses there)."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."


__all__ = [
    "FORMAT",
    "LISTED_MAX",
    "group_line",
    "listed",
    "move_list",
    "position",
    "sentence",
    "squares_by_row",
]
