"""Digest mode: a player who asks for it gets one mail a day listing the boards where it
is his move (with each board), instead of a mail for every move. New boards, nags, the
ends of games and answers to his own commands still come at once."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, col, select

from pbm.services.accounts.users import reply_addresses
from pbm.services.context import Context, Reply, ReplyKind
from pbm.services.mailing.board_mail import board_facts, title_for
from pbm.services.mailing.mail_html import in_words, picture_order
from pbm.services.play.board_text import STARS, summary
from pbm.services.play.boards import board_from_row
from pbm.services.play.lists import status_text
from pbm.store import queries
from pbm.store.models import BoardRow, GamePlayer, User
from pbm.store.models_correspondence import JobMark, MailPreference
from pbm.texts import phrase, render


def wants_digest(session: Session, user_id: int) -> bool:
    found = queries.mail_preference(session, user_id)
    return bool(found and found.digest)


def set_digest(session: Session, user: User, on: bool) -> None:
    queries.own_mail_preference(session, user.saved_id).digest = on
    session.flush()


def digest_readers(session: Session) -> set[int]:
    """Users in digest mode (queries.mail_choices asks about some users only)."""
    query = select(MailPreference.user_id).where(col(MailPreference.digest).is_(True))
    return set(session.exec(query))


def _day_key(user_id: int, now: datetime) -> str:
    return f"{user_id}:{now:%Y-%m-%d}"


def send_digest(ctx: Context, user: User) -> bool:
    """Today's digest for `user`, unless it went out already or he has no move to make."""
    key = _day_key(user.saved_id, ctx.now())
    done = select(JobMark).where(JobMark.kind == "digest", JobMark.key == key)
    if ctx.session.exec(done).first() is not None:
        return False
    query = (
        select(BoardRow)
        .join(GamePlayer, col(GamePlayer.game_id) == BoardRow.id)
        .where(
            GamePlayer.user_id == user.id,
            BoardRow.status == "active",
            col(BoardRow.to_move) == GamePlayer.position,
        )
        .order_by(col(BoardRow.game), col(BoardRow.id))
    )
    boards = [board_from_row(ctx, row) for row in ctx.session.exec(query)]
    if not boards:
        return False
    to = reply_addresses(ctx, user)
    if not to:
        return False
    lines = [phrase("digest_line", label=b.label, status=status_text(b)) for b in boards]
    words = in_words(ctx.session, user)
    summaries = [
        "\n"
        + STARS
        + "\n\n"
        + summary(
            b, board_facts(ctx, b), title=title_for(b, "Summary"), reader=user, in_words=words
        )
        for b in boards
    ]
    ctx.reply(
        Reply(
            to=to,
            subject=phrase("subject_digest"),
            body=render(
                "digest",
                userid=user.userid,
                boards="\n".join(lines),
                summaries="".join(summaries),
            ),
            kind=ReplyKind.DIGEST,
            user_id=user.id,
            pictures=tuple(picture_order(b, user) for b in boards),
        )
    )
    ctx.session.add(JobMark(kind="digest", key=key, at=ctx.now()))
    ctx.session.flush()
    return True
