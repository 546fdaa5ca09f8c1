"""Replies to the sender alone (lists, help, confirmations)."""

from __future__ import annotations

from pbm.services.context import Context, Reply


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
