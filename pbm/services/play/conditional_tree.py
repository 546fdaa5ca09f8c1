"""The tree of one player's conditional moves on one board (issue 15), apart from the
store and the mail: reading the lines a player writes, checking every ply against the
rules from the board's position, and the tree as it is kept in `GamePlayer.conditional`.

Split from pbm.services.play.conditional so that pbm.services.play.board_text, which lists the tree
in its owner's board mails, needs nothing that mails or plays.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pbm.errors import BoardError
from pbm.games import GameError, InvalidMoveError
from pbm.services.play.boards import Board, absent_move_word, refusal
from pbm.texts import echoed, phrase

# Words that only separate the moves of a line: `if c8-c7 then d3-d4`.
KEYWORDS = frozenset({"if", "then"})
# Between moves that hold spaces (Quarto's `b2 SDQF; c3 TLRH`); no game's notation uses
# either sign.
SEPARATORS = re.compile(r"[;,]")
# `c8-c7#12`: the move number the player expects that move to have, as with `move`.
_NUMBERED = re.compile(r"^(.*?)\s*#\s*(\d+)$")


@dataclass
class Ply:
    """One move of the tree, in the game's canonical notation, with the challenge-order
    index of the player who plays it; `next` holds what may follow it."""

    text: str
    player: int
    next: list[Ply] = field(default_factory=list)


@dataclass(frozen=True)
class Line:
    """One line of play as the player wrote it: its number among the lines of his mail
    (blank lines not counted), its text and its moves."""

    number: int
    text: str
    moves: tuple[str, ...]


def split_line(text: str) -> list[str]:
    """The moves of a written line: `if`/`then` and `;`/`,` separate moves that hold
    spaces; without them every word is a move."""
    words = [";" if w.lower() in KEYWORDS else w for w in text.split()]
    joined = " ".join(words)
    if SEPARATORS.search(joined):
        return [m.strip() for m in SEPARATORS.split(joined) if m.strip()]
    return words


def read_lines(first: str, body: str) -> list[Line]:
    """The lines of play of a conditional command: what followed the command on its own
    line (`if c8-c7 then d3-d4` in a reply), then each body line."""
    lines: list[Line] = []
    for raw in [first, *body.split("\n")]:
        text = raw.strip()
        if not text or text.startswith(">"):  # a quote left in the body is no line
            continue
        moves = tuple(split_line(text))
        if moves:
            lines.append(Line(len(lines) + 1, text, moves))
    return lines


def _numbered(text: str) -> tuple[str, int | None]:
    found = _NUMBERED.match(text)
    return (found.group(1), int(found.group(2))) if found else (text, None)


def build(board: Board, owner: int, lines: Sequence[Line], limit: int) -> list[Ply]:
    """The tree of `lines` for the player at challenge index `owner`, each ply checked
    against the rules from the board's position; any fault refuses them all.

    A line alternates the opponents' moves and the owner's answers, as the position says
    whose turn each ply is (a game with extra turns has two moves of one side in a row);
    lines that start alike share their start, and one position has one answer."""
    written = sum(len(line.moves) for line in lines)
    if written > limit:
        raise BoardError(phrase("conditional_too_many", plies=written, limit=limit), board.id)
    rules = board.rules
    tree: list[Ply] = []
    origin: dict[int, int] = {}  # id of an answer -> the line that gave it
    for line in lines:
        state = board.state
        level = tree
        player = owner
        for ply, written_text in enumerate(line.moves, 1):
            text, number = _numbered(written_text)
            seat = rules.to_move(state)
            if seat is None:
                raise _fault(board, line, ply, phrase("conditional_after_end", move=text))
            expected = board.row.move_count + ply
            if number is not None and number != expected:
                reason = phrase("conditional_bad_number", move=written_text, number=expected)
                raise _fault(board, line, ply, reason)
            player = list(rules.player_seats(state)).index(seat)
            absent = absent_move_word(rules, text)
            if absent:  # a move by mail is refused so too (pbm.services.play.moves)
                raise _fault(board, line, ply, absent)
            try:
                move = rules.parse_move(state, text)
            except GameError as exc:
                hints = []
                if isinstance(exc, InvalidMoveError):
                    hints.append(phrase("notation_hint", notation=rules.notation.strip()))
                if _word_by_word(line):
                    hints.append(phrase("conditional_word_by_word"))
                raise _fault(board, line, ply, refusal(exc), "\n".join(hints)) from None
            canonical = rules.format_move(state, move)
            found = next((p for p in level if p.player == player and p.text == canonical), None)
            if found is None:
                other = next((p for p in level if p.player == owner == player), None)
                if other is not None:
                    reason = phrase(
                        "conditional_two_answers",
                        move=canonical,
                        other=origin[id(other)],
                        answer=other.text,
                    )
                    raise _fault(board, line, ply, reason)
                found = Ply(canonical, player)
                level.append(found)
                origin[id(found)] = line.number
            level = found.next
            state = rules.apply(state, move)
        if player != owner:
            reason = phrase("conditional_ends_with_opponent")
            raise _fault(board, line, len(line.moves), reason)
    return tree


def _word_by_word(line: Line) -> bool:
    """Whether every word of a line was read as a move of its own (it has no `;`, `,`,
    `if` or `then`): a move written with a space (`b2 SDQF`) was cut in two."""
    return len(line.moves) > 1 and len(line.moves) == len(line.text.split())


def _fault(board: Board, line: Line, ply: int, reason: str, hint: str = "") -> BoardError:
    """A refused line: its number, the ply and why, the line as written, then how moves
    are written when the move was no move at all."""
    parts = [
        phrase("conditional_bad_ply", line=line.number, ply=ply),
        f"  {echoed(line.text)}",
        reason,
        *([hint] if hint else []),
        phrase("conditional_not_stored"),
    ]
    return BoardError("\n".join(parts), board.id)


def count(tree: Sequence[Ply]) -> int:
    """The plies the tree keeps (a start shared by lines counts once)."""
    return sum(1 + count(p.next) for p in tree)


def paths(tree: Sequence[Ply]) -> list[list[Ply]]:
    """The lines of the tree, each from its first ply to a leaf, in the order written."""
    found: list[list[Ply]] = []
    for ply in tree:
        if not ply.next:
            found.append([ply])
        found += [[ply, *rest] for rest in paths(ply.next)]
    return found


def line_text(path: Sequence[Ply]) -> str:
    """A line as the player would write it again: `;` between moves that hold spaces."""
    texts = [p.text for p in path]
    return ("; " if any(" " in t for t in texts) else " ").join(texts)


def listing(stored: str | None) -> list[str]:
    """What its owner's board mails show of a stored tree (nothing when there is none)."""
    tree = load(stored)
    if not tree:
        return []
    lines = [f"  {n}. {line_text(path)}" for n, path in enumerate(paths(tree), 1)]
    return [phrase("conditional_heading"), *lines]


def dump(tree: Sequence[Ply]) -> str | None:
    """The tree as stored: nested `[text, player, [next...]]` lists; None when empty."""

    def encode(plies: Sequence[Ply]) -> list[Any]:
        return [[p.text, p.player, encode(p.next)] for p in plies]

    return json.dumps(encode(tree), separators=(",", ":")) if tree else None


def load(stored: str | None) -> list[Ply]:
    def decode(items: list[Any]) -> list[Ply]:
        return [Ply(str(text), int(player), decode(rest)) for text, player, rest in items]

    return decode(json.loads(stored)) if stored else []
