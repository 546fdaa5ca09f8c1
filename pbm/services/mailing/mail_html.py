"""The HTML part of a mail: whether its reader gets one (`set ... format html|text`)
and the drawn boards it shows above the text.

The HTML part is made when the mail is sent, never inside the transaction that queued
it: drawing a board takes longer than the move that changed it, and the transaction
holds the board (and, on SQLite, the one write lock). So the transaction stores an
order with the queued mail (`html_order`: whose mail it is and which boards to draw,
as board, move count and seat), and the sender reads what the order needs in its claim
transaction (`html_inputs`) and draws and composes outside it (`with_html_part`).

A board is drawn for the reader's seat where the game hides something (Quadrupel's
setups), so a hidden setup stays as hidden as in the text board; the position before
the last move is replayed too, so the picture marks that move.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import bindparam
from sqlmodel import Session, col, select

from pbm.games import AnyGame
from pbm.games.base import State
from pbm.mail.compose import InlinePicture, with_html
from pbm.pictures.picture import PictureWords, draw
from pbm.services.context import PictureOrder
from pbm.services.play.board_text import ended_line
from pbm.services.play.boards import Board, board_label, replay, rules_for
from pbm.services.play.picture_words import picture_words
from pbm.services.play.secrecy import may_hide
from pbm.store import queries
from pbm.store.models import BoardRow, GamePlayer, Move, User
from pbm.texts import phrase

log = logging.getLogger(__name__)

# "words": the text part alone, its boards in words (pbm.services.play.words).
FORMATS = ("html", "text", "words")
# The formats whose mails go without an HTML part.
TEXT_ONLY = frozenset({"text", "words"})


def mail_format(session: Session, user_id: int) -> str:
    """The format of his mails: "html" (a text part and an HTML part with the drawn
    board, the default), "text" (the text part alone) or "words" (the text part alone,
    its boards in words for screen readers)."""
    found = queries.mail_preference(session, user_id)
    return found.format if found is not None and found.format in FORMATS else "html"


def in_words(session: Session, user: User | None) -> bool:
    """Whether `user` (None: nobody's account) reads his boards in words."""
    return user is not None and user.saved_id in words_readers(session, [user.saved_id])


def words_readers(session: Session, user_ids: Collection[int]) -> set[int]:
    """Those of `user_ids` who read their boards in words: one query for all the
    readers of a board mail."""
    choices = queries.mail_choices(session, user_ids)
    return {user_id for user_id, choice in choices.items() if choice.format == "words"}


def set_format(session: Session, user: User, value: str) -> None:
    queries.own_mail_preference(session, user.saved_id).format = value
    session.flush()


def picture_order(board: Board, reader: User | None, upto: int | None = None) -> PictureOrder:
    """The order for `board` as `reader` reads it, after `upto` moves (default: now)."""
    index = board.index_of(reader.id) if reader is not None else None
    seat = board.seat_of(index) if index is not None and may_hide(board.rules) else None
    count = board.row.move_count if upto is None else min(upto, board.row.move_count)
    return PictureOrder(board.id, count, seat, ended_line(board, count))


def html_order(reader_id: int | None, pictures: Sequence[PictureOrder]) -> str:
    """What the outbox keeps for a mail's HTML part (the `outbox.html` column)."""
    return json.dumps(
        {
            "reader": reader_id,
            "pictures": [[p.game_id, p.upto, p.seat, p.ended] for p in pictures],
        }
    )


Options = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Drawing:
    """What one picture needs, read from the store: the rules, the options (as sorted
    pairs, so that equal drawings are equal and drawn once), the move texts up to the
    position drawn, the seat, the heading, the words drawn and said (read from the
    templates with the heading), the players' userids (by challenge order, to name them
    as the text does) and how a finished board ended (PictureOrder)."""

    rules: AnyGame
    options: Options
    moves: tuple[str, ...]
    seat: int | None
    heading: str
    words: PictureWords
    players: tuple[str, ...] = ()
    ended: str | None = None


# What the pictures of one board after some moves need, read once per claim of the
# sender: a move's board mails to every reader are mostly claimed together.
BoardsRead = dict[tuple[int, int], Drawing | None]


def html_inputs(
    session: Session, mails: Sequence[tuple[str | None, Sequence[str]]]
) -> list[list[Drawing] | None]:
    """What the HTML part of each mail of one claim needs, given as its order (the
    outbox's `html` column) and its recipients; None for a mail that goes as text
    alone: no order (a mail queued before this existed), or its reader (the account
    the order names, else every account of the recipients) asked for text. Each board
    is read once, and the readers' formats in one query."""
    orders = [_order(order) for order, _ in mails]
    readers = [
        None if wanted is None else _readers(session, wanted, recipients)
        for wanted, (_, recipients) in zip(orders, mails, strict=True)
    ]
    # One query for the readers of every mail of the claim (asked mail by mail, it cost
    # the sender as much as reading the boards).
    choices = queries.mail_choices(session, {r for ids in readers if ids for r in ids})
    text_only = {user_id for user_id, choice in choices.items() if choice.format in TEXT_ONLY}
    boards: BoardsRead = {}
    found: list[list[Drawing] | None] = []
    for wanted, ids in zip(orders, readers, strict=True):
        if wanted is None or ids is None or not text_only.isdisjoint(ids):
            found.append(None)
        else:
            found.append(_drawings(session, wanted, boards))
    return found


def _damaged(order: str) -> None:
    # A damaged order (edited by hand?) must not keep the mail from its reader.
    log.exception("HTML order %r not understood; the mail goes as text", order[:200])


def _order(order: str | None) -> dict[str, Any] | None:
    if order is None:
        return None
    try:
        wanted = json.loads(order)
        if not isinstance(wanted, dict):
            raise TypeError(f"an order is an object, not {type(wanted).__name__}")
    except (ValueError, TypeError):
        _damaged(order)
        return None
    return wanted


def _readers(
    session: Session, wanted: dict[str, Any], recipients: Sequence[str]
) -> set[int] | None:
    """The accounts whose format decides (None: the order is damaged)."""
    try:
        reader = wanted.get("reader")
        if reader is not None:
            return {int(reader)}
    except (ValueError, TypeError):
        _damaged(json.dumps(wanted))
        return None
    return {u.saved_id for a in recipients for u in queries.users_by_address(session, a)}


def _drawings(session: Session, wanted: dict[str, Any], boards: BoardsRead) -> list[Drawing] | None:
    """The drawings an order asks for (None: the order is damaged)."""
    drawings: list[Drawing] = []
    try:
        # A mail queued before `ended` was kept has three fields.
        for game_id, upto, seat, *ended in wanted.get("pictures", []):
            key = (int(game_id), int(upto))
            if key not in boards:
                boards[key] = _board(session, *key)
            found = boards[key]
            if found is not None:  # else a board removed since: its picture is left out
                drawings.append(replace(found, seat=seat, ended=ended[0] if ended else None))
    except (ValueError, TypeError, KeyError, LookupError):
        _damaged(json.dumps(wanted))
        return None
    return drawings


# What a picture needs of its board, its moves and its players, as plain columns: the
# sender reads them for every board it draws, and whole rows (BoardRow, Move, GamePlayer
# and User objects) cost it more than composing the mail.
_GAME = select(BoardRow.game, BoardRow.board, BoardRow.options).where(
    BoardRow.id == bindparam("game_id")
)
_MOVE_TEXTS = (
    select(Move.text)
    .where(Move.game_id == bindparam("game_id"))
    .order_by(col(Move.number))
    .limit(bindparam("upto"))
)
_PLAYER_NAMES = (
    select(User.userid)
    .join(GamePlayer, col(GamePlayer.user_id) == col(User.id))
    .where(GamePlayer.game_id == bindparam("game_id"))
    .order_by(col(GamePlayer.position))
)


def _board(session: Session, game_id: int, upto: int) -> Drawing | None:
    """The picture of a board after `upto` moves, as an observer sees it."""
    found = session.exec(_GAME, params={"game_id": game_id}).first()
    if found is None:
        return None
    name, board, options = found
    rules = rules_for(name)
    texts = tuple(session.exec(_MOVE_TEXTS, params={"game_id": game_id, "upto": upto}))
    label = board_label(rules, board)
    heading = (
        phrase("picture_heading", label=label, number=len(texts))
        if texts
        else phrase("picture_heading_start", label=label)
    )
    players = tuple(session.exec(_PLAYER_NAMES, params={"game_id": game_id}))
    words = picture_words()
    return Drawing(rules, tuple(sorted(options.items())), texts, None, heading, words, players)


class Pictures:
    """The pictures this process drew, by what they show, and the positions it
    replayed for them: a move's board mails to both players and the observers show one
    picture wherever the game hides nothing, drawn once by whichever mail needs it
    first; and the position before a move is the one the last picture drew, so a
    picture replays one move instead of the whole game. Both are bounded (least
    recently used first out) and shared by the threads of one process."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._drawn: OrderedDict[Drawing, InlinePicture] = OrderedDict()
        self._states: OrderedDict[tuple[AnyGame, Options, tuple[str, ...]], State] = OrderedDict()
        self._lock = threading.Lock()
        self.drawn = 0  # pictures drawn (not found), for tests and benchmarks

    def picture(self, drawing: Drawing) -> InlinePicture:
        with self._lock:
            found = self._drawn.get(drawing)
            if found is not None:
                self._drawn.move_to_end(drawing)
                return found
        made = self._draw(drawing)
        with self._lock:
            self._drawn[drawing] = made
            self.drawn += 1
            while len(self._drawn) > self.size:
                self._drawn.popitem(last=False)
        return made

    def _state(self, drawing: Drawing, moves: tuple[str, ...]) -> State:
        """The position after `moves` (none of them the last move): kept or replayed."""
        key = (drawing.rules, drawing.options, moves)
        with self._lock:
            state = self._states.get(key)
        if state is None:
            state = replay(drawing.rules, dict(drawing.options), moves)
            self._keep(key, state)
        return state

    def _keep(self, key: tuple[AnyGame, Options, tuple[str, ...]], state: State) -> None:
        with self._lock:
            self._states[key] = state
            self._states.move_to_end(key)
            while len(self._states) > self.size:
                self._states.popitem(last=False)

    def _draw(self, drawing: Drawing) -> InlinePicture:
        """The position (and the one before it, to mark the last move), drawn."""
        rules, moves = drawing.rules, drawing.moves
        previous, move = None, None
        if moves:
            previous = self._state(drawing, moves[:-1])
            move = rules.parse_move(previous, moves[-1])
            state = rules.apply(previous, move)
            # The next move's picture starts from here.
            self._keep((rules, drawing.options, moves), state)
        else:
            state = self._state(drawing, moves)
        drawn = draw(
            rules,
            state,
            seat=drawing.seat,
            words=drawing.words,
            previous=previous,
            heading=drawing.heading,
            players=drawing.players,
            move=move,
            ended=drawing.ended,
        )
        return InlinePicture(
            png=drawn.png,
            width=drawn.width,
            height=drawn.height,
            alt=drawn.alt,
            words=tuple(drawn.words),
        )


# The one cache of drawn pictures of this process (see `Pictures`).
PICTURES = Pictures()


def picture(drawing: Drawing) -> InlinePicture:
    """The picture of `drawing`, drawn once per process."""
    return PICTURES.picture(drawing)


def with_html_part(
    raw: bytes, drawings: Sequence[Drawing] | None, limit: int | None = None
) -> bytes:
    """The queued mail as it is sent: with its HTML part and pictures, or as queued
    when its reader wants text."""
    return with_html_parts([(raw, drawings)], limit)[0]


def with_html_parts(
    mails: Sequence[tuple[bytes, Sequence[Drawing] | None]], limit: int | None = None
) -> list[bytes]:
    """`with_html_part` of each mail, each distinct picture drawn once (`Pictures`). A
    mail that would be longer than `limit` bytes with its pictures goes with its HTML
    part alone, or as text when even that is too long: the queue left room for its
    pictures by an estimate (pbm.output_limits), and this holds the bound whatever the
    pictures weigh. A failure to draw or compose must not keep a mail from its reader:
    it is logged and the text goes alone."""
    sent = []
    for raw, drawings in mails:
        if drawings is None:
            sent.append(raw)
            continue
        try:
            made = with_html(raw, [picture(d) for d in drawings])
            if limit is not None and len(made) > limit and drawings:
                log.warning("mail of %d bytes with its pictures: they are left out", len(made))
                made = with_html(raw, [])
            if limit is not None and len(made) > limit:
                made = raw
            sent.append(made)
        except Exception:  # any failure: the text part still goes
            log.exception("HTML part not made; the mail goes as text")
            sent.append(raw)
    return sent


__all__ = [
    "FORMATS",
    "PICTURES",
    "TEXT_ONLY",
    "BoardsRead",
    "Drawing",
    "PictureOrder",
    "Pictures",
    "html_inputs",
    "html_order",
    "in_words",
    "mail_format",
    "picture",
    "picture_order",
    "set_format",
    "with_html_part",
    "with_html_parts",
]
