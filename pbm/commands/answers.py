"""Replies to the sender alone (lists, help, confirmations, boards shown)."""

from __future__ import annotations

from pbm.services.context import Context, Reply, ReplyKind
from pbm.services.mailing.board_mail import board_reply
from pbm.services.play import lists
from pbm.services.play.board_text import subject_for
from pbm.services.play.boards import Board
from pbm.store.models import User
from pbm.texts import phrase


def answer(
    ctx: Context,
    subject: str,
    body: str,
    kind: ReplyKind,
    *,
    board: Board | None = None,
    reader: User | None = None,
    upto: int | None = None,
    to: list[str] | None = None,
) -> None:
    """Mail `body` back; about a `board`, it threads with the board's mails, to one of
    its players (`reader`) it carries his reply token, and its HTML part draws the
    board (after `upto` moves when given)."""
    recipients = to if to is not None else ([ctx.sender] if ctx.sender else [])
    text = body.rstrip("\n") + "\n"
    # Mailed to the sender alone, it is one of the message's answers.
    alone = bool(ctx.sender) and recipients == [ctx.sender]
    if board is None:
        reply = Reply(recipients, subject, text, kind, to_sender=True, answer=alone)
    else:
        reply = board_reply(
            ctx,
            board,
            reader,
            to=recipients,
            subject=subject,
            body=text,
            kind=kind,
            to_sender=True,
            answer=alone,
            upto=upto,
        )
    ctx.reply(reply)


def mail_show(ctx: Context, board: Board, reader: User | None, upto: int | None) -> None:
    """The summary of a board (after `upto` moves when given), for `show` and `all show`.
    A view of an earlier position says so in its Subject too, rather than naming who
    is to move now."""
    total = board.row.move_count
    earlier = upto is not None and upto < total
    answer(
        ctx,
        phrase(
            "subject_position" if upto else "subject_start",
            label=board.label,
            number=upto,
            total=total,
        )
        if earlier
        else subject_for(board),
        lists.show_text(ctx, board, reader, upto),
        ReplyKind.BOARD,
        board=board,
        reader=reader,
        upto=upto,
    )
