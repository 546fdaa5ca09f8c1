"""Erasure asked for by mail (docs/privacy.md): `erase USERID PASSWORD` mails a token to
the player's confirmed address; the token sent back schedules the erasure
`erasure_delay_days` later; `erase USERID PASSWORD cancel` cancels it until then; the
periodic job (pbm.privacy_jobs) carries out the due ones with pbm.services.accounts.erasure."""

from __future__ import annotations

import base64
import hmac
import logging
import secrets
from datetime import datetime, timedelta

from sqlmodel import col, delete, select

from pbm.errors import PbmError
from pbm.services.accounts.erasure import erase_user
from pbm.services.context import Context
from pbm.store.models import User
from pbm.store.models_privacy import ErasureRequest
from pbm.texts import phrase

log = logging.getLogger(__name__)

_TOKEN_BYTES = 10  # 16 base32 characters


def when(moment: datetime) -> str:
    """A due date as the mails write it."""
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _delay(ctx: Context) -> timedelta:
    return timedelta(days=ctx.config.erasure_delay_days)


def request_of(ctx: Context, user: User) -> ErasureRequest | None:
    query = select(ErasureRequest).where(col(ErasureRequest.user_id) == user.saved_id)
    return ctx.session.exec(query).first()


def _refuse_if_scheduled(row: ErasureRequest | None, user: User) -> None:
    if row is not None and row.due_at is not None:
        raise PbmError(phrase("erase_already", userid=user.userid, date=when(row.due_at)))


def ask(ctx: Context, user: User) -> str:
    """A fresh token for erasing `user` (any earlier unconfirmed one no longer counts);
    PbmError when his erasure is scheduled already."""
    row = request_of(ctx, user)
    _refuse_if_scheduled(row, user)
    if row is None:
        row = ErasureRequest(user_id=user.saved_id, token="", asked_at=ctx.now())
    row.token = base64.b32encode(secrets.token_bytes(_TOKEN_BYTES)).decode().lower()
    row.asked_at = ctx.now()
    ctx.session.add(row)
    ctx.session.flush()
    log.info("erasure asked for user #%d", user.saved_id)
    return row.token


def confirm(ctx: Context, user: User, token: str) -> datetime:
    """Schedule the erasure the token was mailed for; returns when it happens. PbmError
    when nothing was asked, the token is wrong or older than the delay, or it is
    scheduled already."""
    row = request_of(ctx, user)
    _refuse_if_scheduled(row, user)
    if row is None:
        raise PbmError(phrase("erase_not_asked", userid=user.userid))
    if row.asked_at + _delay(ctx) < ctx.now():
        raise PbmError(phrase("erase_token_expired", userid=user.userid))
    if not hmac.compare_digest(row.token.encode(), token.lower().encode()):
        raise PbmError(phrase("erase_bad_token", userid=user.userid, token=token))
    row.confirmed_at = ctx.now()
    row.due_at = ctx.now() + _delay(ctx)
    ctx.session.add(row)
    ctx.session.flush()
    log.warning("erasure of user #%d scheduled for %s", user.saved_id, when(row.due_at))
    return row.due_at


def cancel(ctx: Context, user: User) -> None:
    """Forget his erasure, asked or scheduled; PbmError when there is none."""
    row = request_of(ctx, user)
    if row is None:
        raise PbmError(phrase("erase_nothing_to_cancel", userid=user.userid))
    ctx.session.delete(row)
    ctx.session.flush()
    log.warning("erasure of user #%d cancelled", user.saved_id)


def due_requests(ctx: Context) -> list[int]:
    query = select(ErasureRequest.id).where(col(ErasureRequest.due_at) <= ctx.now())
    return [i for i in ctx.session.exec(query) if i is not None]


def perform(ctx: Context, request_id: int) -> int:
    """Erase the player of request `request_id` if it is still due (not cancelled since
    the list was read); returns 1 if he was erased."""
    row = ctx.session.get(ErasureRequest, request_id)
    if row is None or row.due_at is None or row.due_at > ctx.now():
        return 0
    user = ctx.session.get(User, row.user_id)
    if user is None:
        ctx.session.delete(row)
        return 0
    erase_user(ctx, user)  # deletes the request with his other rows
    return 1


def drop_unconfirmed(ctx: Context) -> int:
    """Forget the asks whose token was never sent back within the delay."""
    stale = (col(ErasureRequest.due_at).is_(None)) & (
        col(ErasureRequest.asked_at) < ctx.now() - _delay(ctx)
    )
    ids = [i for i in ctx.session.exec(select(ErasureRequest.id).where(stale))]
    if ids:
        ctx.session.exec(delete(ErasureRequest).where(col(ErasureRequest.id).in_(ids)))
    return len(ids)
