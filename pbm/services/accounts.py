"""Accounts: signup, passwords (scrypt hashes, throttled failures), addresses."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import timedelta

from sqlmodel import select

from pbm.errors import AuthError, NotFoundError, PbmError
from pbm.services.context import Context
from pbm.services.passwords import hash_password, verify_password
from pbm.store import queries
from pbm.store.models import GameTypeSetting, Subscription, User
from pbm.texts import phrase

log = logging.getLogger(__name__)

# pbmserv: userids and passwords may hold anything but spaces, quotes and colons.
_WORD = re.compile(r"^[^\s\"':]+$")
_ADDRESS = re.compile(r"^[^\s@<>()\",;:]+@[^\s@<>()\",;:.][^\s@<>()\",;:]*$")
MAX_USERID = 32


def valid_address(address: str) -> bool:
    return bool(_ADDRESS.match(address))


def find_user(ctx: Context, userid: str) -> User:
    user = queries.user_by_userid(ctx.session, userid)
    if user is None or (user.disabled and not user.password_hash):
        raise NotFoundError(phrase("unknown_userid", userid=userid))
    return user


def _throttle_keys(ctx: Context, userid: str) -> list[tuple[str, str]]:
    keys = [("auth-userid", userid.lower())]
    if ctx.sender:
        keys.append(("auth-sender", ctx.sender.lower()))
    return keys


def authenticate(ctx: Context, userid: str, password: str, known: Sequence[User] = ()) -> User:
    """The account `userid` if `password` is right; failures are counted and throttled.
    `known`: users this transaction has loaded already (a board's players), to skip a query."""
    since = ctx.now() - timedelta(minutes=ctx.config.failure_window_minutes)
    counts = queries.counts_by_key(ctx.session, _throttle_keys(ctx, userid), since)
    for (kind, key), count in counts.items():
        if count >= ctx.config.max_failures:
            log.warning("throttled %s %s", kind, key)
            raise AuthError(phrase("throttled", minutes=ctx.config.failure_window_minutes))
    key = userid.lower()
    user = next((u for u in known if u.userid_key == key), None)
    if user is None:
        user = queries.user_by_userid(ctx.session, userid)
    if user is None or not user.password_hash:
        ctx.auth_failures.extend(_throttle_keys(ctx, userid))
        log.info("unknown userid %r from %s", userid, ctx.sender)
        raise AuthError(phrase("invalid_userid", userid=userid))
    if not verify_password(password, user.password_hash):
        ctx.auth_failures.extend(_throttle_keys(ctx, userid))
        log.warning("wrong password for %s from %s", user.userid, ctx.sender)
        raise AuthError(phrase("invalid_password", userid=userid))
    if user.disabled:
        raise AuthError(phrase("account_disabled", userid=user.userid))
    return user


def record_auth_failures(ctx: Context) -> None:
    """Store the failures counted during a message (outside any rolled-back savepoint)."""
    for kind, key in ctx.auth_failures:
        queries.add_event(ctx.session, kind, key, ctx.now())
    ctx.auth_failures.clear()


def _check_password_text(password: str) -> None:
    if not _WORD.match(password) or len(password) > 128:
        raise PbmError(phrase("bad_password"))


def create_user(ctx: Context, userid: str, password: str, addresses: Sequence[str]) -> User:
    if not _WORD.match(userid) or len(userid) > MAX_USERID:
        raise PbmError(phrase("bad_userid", userid=userid, maximum=MAX_USERID))
    _check_password_text(password)
    addresses = [a.lower() for a in addresses]
    bad = [a for a in addresses if not valid_address(a)]
    if bad or not addresses:
        raise PbmError(phrase("bad_address", addresses=" ".join(bad) or "(none)"))
    if queries.user_by_userid(ctx.session, userid) is not None:
        raise PbmError(phrase("userid_taken", userid=userid))
    user = User(
        userid=userid,
        userid_key=userid.lower(),
        password_hash=hash_password(password, ctx.config.password_cost),
        created_at=ctx.now(),
    )
    ctx.session.add(user)
    ctx.session.flush()
    assert user.id is not None
    queries.set_addresses(ctx.session, user.id, addresses)
    ctx.session.flush()
    log.info("new user %s %s", userid, addresses)
    return user


def set_password(ctx: Context, user: User, new_password: str) -> None:
    _check_password_text(new_password)
    user.password_hash = hash_password(new_password, ctx.config.password_cost)
    ctx.session.add(user)


def set_user_addresses(ctx: Context, user: User, addresses: Sequence[str]) -> list[str]:
    addresses = [a.lower() for a in addresses]
    bad = [a for a in addresses if not valid_address(a)]
    if bad or not addresses:
        raise PbmError(phrase("bad_address", addresses=" ".join(bad) or "(none)"))
    assert user.id is not None
    queries.set_addresses(ctx.session, user.id, addresses)
    ctx.addresses.pop(user.id, None)
    return addresses


def sign_off(ctx: Context, user: User) -> None:
    """Refuse all challenges and stop all subscriptions; current games go on."""
    assert user.id is not None
    session = ctx.session
    from pbm.games import GAMES

    for name in GAMES:
        setting = queries.type_setting(session, user.id, name) or GameTypeSetting(
            user_id=user.id, game=name
        )
        setting.game_limit = 0
        setting.seeking = 0
        setting.subscribe_all = False
        setting.notify_all = False
        session.add(setting)
    for sub in session.exec(select(Subscription).where(Subscription.user_id == user.id)):
        session.delete(sub)


def delete_user(ctx: Context, user: User) -> None:
    """Remove an account with no active games: it keeps its userid for the history."""
    assert user.id is not None
    active = [g for g in queries.games_of_user(ctx.session, user.id, statuses=("active",))]
    if active:
        boards = ", ".join(f"{g.game} {g.board}" for g in active)
        raise PbmError(phrase("delete_has_games", boards=boards))
    sign_off(ctx, user)
    queries.set_addresses(ctx.session, user.id, [])
    ctx.addresses.pop(user.id, None)
    user.password_hash = ""
    user.disabled = True
    ctx.session.add(user)
    log.info("deleted user %s", user.userid)


def reply_addresses(ctx: Context, user: User) -> list[str]:
    """Where mail for `user` goes: the first registered address."""
    assert user.id is not None
    if user.id not in ctx.addresses:
        ctx.addresses[user.id] = queries.addresses_of(ctx.session, user.id)
    return ctx.addresses[user.id][:1]


def is_known_sender(ctx: Context) -> bool:
    return bool(queries.users_by_address(ctx.session, ctx.sender)) if ctx.sender else False
