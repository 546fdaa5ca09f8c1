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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, col, select

from pbm.games import AnyGame
from pbm.mail.compose import InlinePicture, with_html
from pbm.pictures import draw
from pbm.services.boards import Board, board_label, replay, rules_for
from pbm.services.context import PictureOrder
from pbm.services.secrecy import may_hide
from pbm.store import queries
from pbm.store.models import Game, User
from pbm.store.models_correspondence import MailPreference
from pbm.texts import phrase

log = logging.getLogger(__name__)

FORMATS = ("html", "text")


def mail_format(session: Session, user_id: int) -> str:
    """The format of his mails: "html" (a text part and an HTML part with the drawn
    board, the default) or "text" (the text part alone)."""
    found = queries.mail_preference(session, user_id)
    return found.format if found is not None and found.format in FORMATS else "html"


def set_format(session: Session, user: User, value: str) -> None:
    found = queries.mail_preference(session, user.saved_id) or MailPreference(user_id=user.saved_id)
    found.format = value
    session.add(found)
    session.flush()


def picture_order(board: Board, reader: User | None, upto: int | None = None) -> PictureOrder:
    """The order for `board` as `reader` reads it, after `upto` moves (default: now)."""
    index = board.index_of(reader.id) if reader is not None else None
    seat = board.seat_of(index) if index is not None and may_hide(board.rules) else None
    count = board.row.move_count if upto is None else min(upto, board.row.move_count)
    return PictureOrder(board.id, count, seat)


def html_order(reader_id: int | None, pictures: Sequence[PictureOrder]) -> str:
    """What the outbox keeps for a mail's HTML part (the `outbox.html` column)."""
    return json.dumps(
        {"reader": reader_id, "pictures": [[p.game_id, p.upto, p.seat] for p in pictures]}
    )


@dataclass(frozen=True)
class Drawing:
    """What one picture needs, read from the store: the rules, the options (as sorted
    pairs, so that equal drawings are equal and drawn once), the move texts up to the
    position drawn, the seat and the heading."""

    rules: AnyGame
    options: tuple[tuple[str, str], ...]
    moves: tuple[str, ...]
    seat: int | None
    heading: str


def html_inputs(
    session: Session, order: str | None, recipients: Sequence[str]
) -> list[Drawing] | None:
    """What the HTML part of a queued mail needs, or None when the mail goes as text
    alone: no order (a mail queued before this existed), or its reader (the account the
    order names, else every account of the recipients) asked for text."""
    if order is None:
        return None
    try:
        return _inputs(session, json.loads(order), recipients)
    except (ValueError, TypeError, KeyError, LookupError):
        # A damaged order (edited by hand?) must not keep the mail from its reader.
        log.exception("HTML order %r not understood; the mail goes as text", order[:200])
        return None


def _inputs(
    session: Session, wanted: dict[str, Any], recipients: Sequence[str]
) -> list[Drawing] | None:
    reader = wanted.get("reader")
    if reader is not None:
        ids = {int(reader)}
    else:
        ids = {u.saved_id for a in recipients for u in queries.users_by_address(session, a)}
    if ids:
        query = select(MailPreference.format).where(col(MailPreference.user_id).in_(ids))
        if "text" in set(session.exec(query)):
            return None
    drawings: list[Drawing] = []
    for game_id, upto, seat in wanted.get("pictures", []):
        row = session.get(Game, game_id)
        if row is None:  # a board removed since: its picture is left out
            continue
        rules = rules_for(row.game)
        texts = tuple(m.text for m in queries.moves_of(session, row.saved_id)[:upto])
        label = board_label(rules, row.board)
        heading = (
            phrase("picture_heading", label=label, number=len(texts))
            if texts
            else phrase("picture_heading_start", label=label)
        )
        options = tuple(sorted(json.loads(row.options).items()))
        drawings.append(Drawing(rules, options, texts, seat, heading))
    return drawings


def picture(drawing: Drawing) -> InlinePicture:
    """Replay the position (and the one before it, to mark the last move) and draw it."""
    rules, options, moves = drawing.rules, dict(drawing.options), drawing.moves
    state = replay(rules, options, moves)
    previous = replay(rules, options, moves[:-1]) if moves else None
    drawn = draw(rules, state, seat=drawing.seat, previous=previous, heading=drawing.heading)
    return InlinePicture(
        png=drawn.png,
        width=drawn.width,
        height=drawn.height,
        alt=drawn.alt,
        words=tuple(drawn.words),
    )


def with_html_part(raw: bytes, drawings: Sequence[Drawing] | None) -> bytes:
    """The queued mail as it is sent: with its HTML part and pictures, or as queued
    when its reader wants text."""
    return with_html_parts([(raw, drawings)])[0]


def with_html_parts(mails: Sequence[tuple[bytes, Sequence[Drawing] | None]]) -> list[bytes]:
    """`with_html_part` of each mail, drawing each distinct picture once: a move's
    board mails to both players (and observers) show the same picture wherever the
    game hides nothing, and are mostly sent together. A failure to draw or compose
    must not keep a mail from its reader: it is logged and the text goes alone."""
    drawn: dict[Drawing, InlinePicture] = {}
    sent = []
    for raw, drawings in mails:
        if drawings is None:
            sent.append(raw)
            continue
        try:
            for d in drawings:
                if d not in drawn:
                    drawn[d] = picture(d)
            sent.append(with_html(raw, [drawn[d] for d in drawings]))
        except Exception:  # any failure: the text part still goes
            log.exception("HTML part not made; the mail goes as text")
            sent.append(raw)
    return sent


__all__ = [
    "FORMATS",
    "Drawing",
    "PictureOrder",
    "html_inputs",
    "html_order",
    "mail_format",
    "picture",
    "picture_order",
    "set_format",
    "with_html_part",
    "with_html_parts",
]
