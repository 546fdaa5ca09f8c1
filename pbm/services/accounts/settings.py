"""A player's choices: subscriptions, notifications, challenge limits, seeking."""

from __future__ import annotations

from collections.abc import Sequence

from pbm.errors import PbmError
from pbm.games import AnyGame as Rules
from pbm.services.context import Context
from pbm.services.play.boards import Board
from pbm.store import queries
from pbm.store.models import GameTypeSetting, Subscription, User
from pbm.texts import echoed, phrase


def type_setting(ctx: Context, user: User, rules: Rules) -> GameTypeSetting:
    found = queries.type_setting(ctx.session, user.saved_id, rules.name)
    if found is None:
        found = GameTypeSetting(user_id=user.saved_id, game=rules.name)
        ctx.session.add(found)
    return found


def subscribe(ctx: Context, user: User, boards: Sequence[Board], kind: str = "subscribe") -> None:
    for board in boards:
        if queries.subscription(ctx.session, board.id, user.saved_id, kind) is None:
            ctx.session.add(Subscription(game_id=board.id, user_id=user.saved_id, kind=kind))
    ctx.session.flush()


def unsubscribe(ctx: Context, user: User, boards: Sequence[Board], kind: str = "subscribe") -> None:
    for board in boards:
        found = queries.subscription(ctx.session, board.id, user.saved_id, kind)
        if found is not None:
            ctx.session.delete(found)
    ctx.session.flush()


def toggle_notify(
    ctx: Context, user: User, boards: Sequence[Board]
) -> tuple[list[Board], list[Board]]:
    """`notify ... board...`: each board's end-of-game mail switched on, or off when it
    was on (the only way a player takes one back); the boards (switched on, off)."""
    on: list[Board] = []
    off: list[Board] = []
    for board in boards:
        was = queries.subscription(ctx.session, board.id, user.saved_id, "notify") is not None
        (unsubscribe if was else subscribe)(ctx, user, [board], "notify")
        (off if was else on).append(board)
    return on, off


def set_subscribe_all(ctx: Context, user: User, rules: Rules, on: bool) -> None:
    setting = type_setting(ctx, user, rules)
    setting.subscribe_all = on
    ctx.session.add(setting)


def toggle_notify_all(ctx: Context, user: User, rules: Rules) -> bool:
    setting = type_setting(ctx, user, rules)
    setting.notify_all = not setting.notify_all
    ctx.session.add(setting)
    return setting.notify_all


LIMIT_WORDS = {"accept": None, "all": None, "inf": None, "reject": 0}


def set_limit(ctx: Context, user: User, rules: Rules, value: str | None) -> int | None:
    """Set (or with None, report) the cap on active games; None = unlimited, 0 = none."""
    setting = type_setting(ctx, user, rules)
    if value is None:
        return setting.game_limit
    word = value.lower()
    if word in LIMIT_WORDS:
        limit = LIMIT_WORDS[word]
    elif word.isdigit():
        limit = int(word)
    else:
        raise PbmError(phrase("bad_limit", value=echoed(value)))
    setting.game_limit = limit
    ctx.session.add(setting)
    return limit


def set_seeking(ctx: Context, user: User, rules: Rules, count: int) -> None:
    if count < 0 or count > 100:
        raise PbmError(phrase("bad_seek", value=count))
    setting = type_setting(ctx, user, rules)
    setting.seeking = count
    ctx.session.add(setting)
