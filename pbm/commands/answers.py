"""Replies to the sender alone (lists, help, confirmations, boards shown)."""

from __future__ import annotations

from pbm.services import lists
from pbm.services.boards import Board
from pbm.services.context import Context, Reply
from pbm.services.render import subject_for
from pbm.store.models import User


def answer(
    ctx: Context,
    subject: str,
    body: str,
    kind: str,
    *,
    game_id: int | None = None,
    user_id: int | None = None,
    to: list[str] | None = None,
) -> None:
    recipients = to if to is not None else ([ctx.sender] if ctx.sender else [])
    ctx.reply(
        Reply(
            to=recipients,
            subject=subject,
            body=body.rstrip("\n") + "\n",
            kind=kind,
            game_id=game_id,
            user_id=user_id,
            to_sender=True,
            # Mailed to the sender alone, it is one of the message's answers.
            answer=bool(ctx.sender) and recipients == [ctx.sender],
        )
    )


def mail_show(ctx: Context, board: Board, reader: User | None, upto: int | None) -> None:
    """The summary of a board (after `upto` moves when given), for `show` and `all show`."""
    answer(
        ctx,
        subject_for(board),
        lists.show_text(ctx, board, reader, upto),
        "board",
        game_id=board.id,
        user_id=reader.id if reader and board.index_of(reader.id) is not None else None,
    )
