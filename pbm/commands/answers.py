"""Replies to the sender alone (lists, help, confirmations, boards shown)."""

from __future__ import annotations

from pbm.services import lists
from pbm.services.boards import Board
from pbm.services.context import Context, Reply
from pbm.services.mailing import board_reply
from pbm.services.render import subject_for
from pbm.store.models import User


def answer(
    ctx: Context,
    subject: str,
    body: str,
    kind: str,
    *,
    board: Board | None = None,
    reader: User | None = None,
    to: list[str] | None = None,
) -> None:
    """Mail `body` back; about a `board`, it threads with the board's mails, and to one
    of its players (`reader`) it carries his reply token."""
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
        )
    ctx.reply(reply)


def mail_show(ctx: Context, board: Board, reader: User | None, upto: int | None) -> None:
    """The summary of a board (after `upto` moves when given), for `show` and `all show`."""
    answer(
        ctx,
        subject_for(board),
        lists.show_text(ctx, board, reader, upto),
        "board",
        board=board,
        reader=reader,
    )
