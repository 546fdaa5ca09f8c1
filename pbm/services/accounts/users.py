"""Accounts: signup, passwords (scrypt hashes, throttled failures), addresses.

Userids are names (`userid_problem`): NFKC, 2-20 letters, digits, `_`, `-`, `.`, compared
by `queries.userid_key` (NFKC + case folding). Rows stored before these rules keep working.

Password failures are throttled per (userid, sender address) pair, and addresses that are
not registered to the userid share one more budget per userid (docs/security.md): a
stranger can spend only the strangers' budget, never the owner's own address's. A failure
counts the moment it happens: it is kept in `Context.auth_failures`, which survives the
failing command's rolled-back savepoint, and `record_auth_failures` stores it afterwards.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import textwrap
import unicodedata
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlmodel import select

from pbm.errors import AuthError, NotFoundError, PbmError
from pbm.games import GAMES
from pbm.mail.visible import hidden_character
from pbm.services.accounts import consent
from pbm.services.accounts.passwords import (
    PasswordCheckNeeded,
    hash_password,
    kept_outcome,
    verify_password,
)
from pbm.services.context import Context
from pbm.store import addresses, queries
from pbm.store.models import GameTypeSetting, Subscription, User, UserAddress
from pbm.texts import echoed, phrase

log = logging.getLogger(__name__)

# pbmserv: passwords may hold anything but spaces, quotes and colons.
_WORD = re.compile(r"^[^\s\"':]+$")
_ADDRESS = re.compile(r"^[^\s@<>()\",;:]+@[^\s@<>()\",;:.][^\s@<>()\",;:]*$")
MIN_USERID = 2
MAX_USERID = 20
MAX_PASSWORD = 128
USERID_SIGNS = "_-."
# Control, format (invisible: U+200B, bidi overrides such as U+202E) and surrogate code
# points: never in a password, since nobody can see or reliably type them.
_INVISIBLE = ("Cc", "Cf", "Cs")

# Password failures, counted per (userid, address) pair and per userid for strangers.
PAIR_FAILURE = "auth-pair"
STRANGER_FAILURE = "auth-stranger"
_MAX_EVENT_KEY = 255  # rate_events.key
_MAX_ADDRESS_BYTES = 254


def valid_address(address: str) -> bool:
    # RFC 5321's 254 octets: a longer one is no address any server delivers to.
    return len(address.encode("utf-8")) <= _MAX_ADDRESS_BYTES and bool(_ADDRESS.match(address))


def userid_key(userid: str) -> str:
    """The form userids are compared in (NFKC, case-folded): see queries.userid_key."""
    return queries.userid_key(userid)


def shown(text: str) -> str:
    """`text` with every character that cannot be seen written as <U+XXXX>, for replies
    and listings that must not carry a NUL or a bidi override themselves."""
    return "".join(
        f"<U+{ord(c):04X}>" if unicodedata.category(c)[0] in "CZ" and c != " " else c for c in text
    )


def wrapped(text: str, width: int = 72) -> str:
    """`text` with each paragraph (blank-line separated) refilled to `width` columns, so
    that a phrase stays inside 72 columns whatever was put into it. Indented paragraphs
    (examples of commands) are kept as they are."""
    return "\n\n".join(
        paragraph
        if paragraph.startswith(" ")
        else textwrap.fill(
            " ".join(paragraph.split()),
            width,
            break_long_words=False,
            break_on_hyphens=False,
        )
        for paragraph in text.split("\n\n")
    )


def _describe(char: str) -> str:
    name = unicodedata.name(char, "")
    visible = unicodedata.category(char)[0] not in "CZ"
    return f"'{char}' (U+{ord(char):04X})" if visible else f"U+{ord(char):04X} {name}".rstrip()


# The words `show`, `games` and `all show` read after userids as which boards to list
# (pbm.services.play.lists): a player of that name could never list his own.
LIST_SELECTORS = ("all", "active", "inactive", "next")


def userid_problem(userid: str) -> str | None:
    """Why `userid` cannot be a new userid, as a sentence for the player; None if it can.

    The rule: in NFKC form, 2 to 20 characters, each a letter of any script (Unicode
    category L*), a decimal digit (Nd) or one of `_ - .`; the first a letter or a digit
    (a leading `-` reads as a challenge option); at least one letter (`101` reads as a
    board number); not one of the list commands' words (LIST_SELECTORS). No control,
    format (U+200B, U+202E...), space or other character."""
    name = unicodedata.normalize("NFKC", userid)
    bad = [c for c in dict.fromkeys(name) if not _userid_char(c)]
    if bad:
        return phrase("userid_bad_chars", chars=", ".join(_describe(c) for c in bad[:3]))
    if not MIN_USERID <= len(name) <= MAX_USERID:
        return phrase("userid_bad_length", length=len(name), minimum=MIN_USERID, maximum=MAX_USERID)
    if name[0] in USERID_SIGNS:
        return phrase("userid_bad_start", char=name[0])
    if not any(unicodedata.category(c).startswith("L") for c in name):
        return phrase("userid_no_letter")
    if name.casefold() in LIST_SELECTORS:
        return phrase("userid_list_word", word=name)
    return None


def stored_userid_problem(user: User) -> str | None:
    """Why a stored account's userid breaks today's rule (it signed up before the rule,
    and keeps working); None if it does not."""
    problem = userid_problem(user.userid)
    if problem is not None:
        return problem
    normal = unicodedata.normalize("NFKC", user.userid)
    if normal != user.userid:
        return phrase("userid_not_nfkc", normal=shown(normal))
    if user.userid_key != userid_key(user.userid):
        # Found by its old key only, so a look-alike could still sign up beside it.
        return phrase("userid_old_key", stored=shown(user.userid_key))
    return None


def _userid_char(char: str) -> bool:
    category = unicodedata.category(char)
    return category.startswith("L") or category == "Nd" or char in USERID_SIGNS


def password_problem(password: str) -> str | None:
    """Why `password` cannot be set, for the player (never quoting it); None if it can."""
    if (
        len(password) > MAX_PASSWORD
        or not _WORD.match(password)
        or any(unicodedata.category(c) in _INVISIBLE for c in password)
    ):
        return wrapped(phrase("bad_password", maximum=MAX_PASSWORD))
    return None


def user_named(ctx: Context, userid: str) -> User | None:
    """The account `userid` names, or None (a deleted account keeps its userid for
    the history, disabled with no password: it is nobody's now)."""
    user = queries.user_by_userid(ctx.session, userid)
    if user is None or deleted(user):
        return None
    return user


def deleted(user: User) -> bool:
    """Whether `user` was deleted (or erased): it keeps its row and userid for the
    history, disabled with no password."""
    return user.disabled and not user.password_hash


def find_user(ctx: Context, userid: str) -> User:
    user = user_named(ctx, userid)
    if user is None:
        raise NotFoundError(phrase("unknown_userid", userids=echoed(shown(userid))))
    return user


def _event_key(text: str) -> str:
    """A rate_events key: the text itself when it fits, else a digest of it."""
    return text if len(text) <= _MAX_EVENT_KEY else _digest(text)


def _digest(text: str) -> str:
    return "#" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def pair_event_key(key: str, address: str) -> str:
    """The key of a (userid key, address) pair's password failures: `KEY ADDRESS`, the
    address as its digest when that does not fit, so that the key still starts with the
    userid key (a rename moves it, an erasure finds it); all of it a digest only for an
    unknown userid too long for that."""
    text = f"{key} {address}"
    if len(text) > _MAX_EVENT_KEY:
        text = f"{key} {_digest(address)}"
    return _event_key(text)


def _failure_counts(
    ctx: Context, events: Sequence[tuple[str, str]], since: datetime
) -> dict[tuple[str, str], int]:
    """Failures in the window: those stored, plus those of this message not yet stored."""
    counts = queries.counts_by_key(ctx.session, events, since)
    return {event: counts[event] + ctx.auth_failures.count(event) for event in events}


def _is_registered(ctx: Context, user: User | None) -> bool:
    """Whether the sender is one of `user`'s addresses (the admin CLI, with no sender,
    counts as registered: it is the operator; a From its domain disowns does not)."""
    if not ctx.sender:
        return True
    if user is None or ctx.sender_unverified:
        return False
    box = consent.mailbox(ctx, ctx.sender)
    return any(r.mailbox == box for r in addresses.rows_of(ctx.session, user.saved_id))


def _refuse(
    ctx: Context, event: tuple[str, str], limit: int, since: datetime, userid: str
) -> AuthError:
    """The refusal of an attempt that is not checked, saying until when."""
    window = timedelta(minutes=ctx.config.failure_window_minutes)
    times = queries.event_times(ctx.session, *event, since)
    times += [ctx.now()] * ctx.auth_failures.count(event)
    # The attempts are checked again once all but limit - 1 of the failures have aged out.
    index = max(0, min(len(times) - limit, len(times) - 1))
    until = (times[index] if times else ctx.now()) + window
    minutes = max(1, math.ceil((until - ctx.now()).total_seconds() / 60))
    kind, key = event
    log.info("refused unchecked (%s %s): %s from %s", kind, key, userid, ctx.sender)
    which = "throttled" if kind == PAIR_FAILURE else "throttled_strangers"
    return AuthError(
        wrapped(
            phrase(
                which,
                userid=userid,
                address=ctx.sender,
                limit=limit,
                window=ctx.config.failure_window_minutes,
                minutes=minutes,
                until=until.strftime("%H:%M UTC"),
            )
        )
    )


def authenticate(ctx: Context, userid: str, password: str, known: Sequence[User] = ()) -> User:
    """The account `userid` if `password` is right. Each failure counts at once; past a
    budget the attempt is refused without checking the password (no scrypt run).
    `known`: users this transaction has loaded already (a board's players), to skip a query."""
    key = userid_key(userid)
    user = next((u for u in known if u.userid_key == key), None)
    if user is None:
        user = queries.user_by_userid(ctx.session, userid)
    if user is not None:
        key = user.userid_key  # a row stored under an older key form counts under it
    name = user.userid if user is not None else echoed(shown(userid))
    # A From its domain disowns has a pair of its own: a forger of her address cannot
    # spend the budget of the owner's real mail.
    # One pair per mailbox however the From is spelled (`+tag`, IDN, case).
    address = consent.mailbox(ctx, ctx.sender) + (" unverified" if ctx.sender_unverified else "")
    pair = (PAIR_FAILURE, pair_event_key(key, address))
    stranger = (STRANGER_FAILURE, _event_key(key))
    since = ctx.now() - timedelta(minutes=ctx.config.failure_window_minutes)
    counts = _failure_counts(ctx, [pair, stranger], since)
    # A mail that proves its From (its own reply token, or dmarc=pass at a trusted MTA)
    # skips the lock a forger of that From could have set on the owner.
    vouched = ctx.sender_token or ctx.sender_dmarc_pass
    if counts[pair] >= ctx.config.max_failures and not vouched:
        raise _refuse(ctx, pair, ctx.config.max_failures, since, name)
    registered: bool | None = None
    if counts[stranger] >= ctx.config.stranger_max_failures:
        registered = _is_registered(ctx, user)
        if not registered:
            raise _refuse(ctx, stranger, ctx.config.stranger_max_failures, since, name)
    if user is None or not user.password_hash:
        _count_failure(ctx, pair, stranger, counts, registered=False)
        log.info("unknown userid %r from %s", userid, ctx.sender)
        raise AuthError(phrase("invalid_userid", userid=name))
    # One look at the caches: a move by a player already checked costs no second one.
    matches = kept_outcome(password, user.password_hash)
    if matches is None:
        if ctx.password_checks_outside:
            raise PasswordCheckNeeded(password, user.password_hash)
        matches = verify_password(password, user.password_hash)
    if not matches:
        if registered is None:
            registered = _is_registered(ctx, user)
        _count_failure(ctx, pair, stranger, counts, registered=registered)
        log.warning(
            "wrong password for %s from %s (%s address)",
            user.userid,
            ctx.sender,
            "registered" if registered else "unregistered",
        )
        raise AuthError(phrase("invalid_password", userid=name))
    if user.disabled:
        raise AuthError(phrase("account_disabled", userid=user.userid))
    return user


def _count_failure(
    ctx: Context,
    pair: tuple[str, str],
    stranger: tuple[str, str],
    counts: dict[tuple[str, str], int],
    *,
    registered: bool,
) -> None:
    """Count one failure now, and log (once) a budget it uses up."""
    spent = [(pair, ctx.config.max_failures)]
    if not registered:
        spent.append((stranger, ctx.config.stranger_max_failures))
    for event, limit in spent:
        ctx.auth_failures.append(event)
        if counts[event] + 1 == limit:
            log.warning(
                "password budget used up (%s %s): %d failures in %d minutes",
                *event,
                limit,
                ctx.config.failure_window_minutes,
            )


def record_auth_failures(ctx: Context) -> None:
    """Store the failures counted during a message. Call it outside any savepoint that
    may roll back (after each message, or after each command's savepoint ends): until
    then the failures are counted from `ctx.auth_failures`, and a rollback would lose
    what was stored inside it."""
    for kind, key in ctx.auth_failures:
        queries.add_event(ctx.session, kind, key, ctx.now())
    ctx.auth_failures.clear()


def check_userid(ctx: Context, userid: str, owner: User | None = None) -> str:
    """The NFKC form of a new userid, or PbmError saying what is wrong and how to write
    it right (also when the userid is taken, whatever its case or width, by another
    account than `owner`: a renamed account may keep its userid in another case)."""
    problem = userid_problem(userid)
    if problem is not None:
        raise PbmError(
            wrapped(
                phrase(
                    "bad_userid",
                    userid=shown(userid),
                    problem=problem,
                    minimum=MIN_USERID,
                    maximum=MAX_USERID,
                )
            )
        )
    name = unicodedata.normalize("NFKC", userid)
    taken = queries.user_by_userid(ctx.session, name)
    if taken is not None and owner is not None and taken.id == owner.id:
        return name
    if taken is not None and taken.userid == name:  # the case note only for another case
        raise PbmError(wrapped(phrase("userid_taken_same", userid=name)))
    if taken is not None:
        raise PbmError(wrapped(phrase("userid_taken", userid=name, taken=shown(taken.userid))))
    return name


def _check_password_text(password: str) -> None:
    problem = password_problem(password)
    if problem is not None:
        raise PbmError(problem)


def _checked_addresses(ctx: Context, addresses: Sequence[str]) -> dict[str, str]:
    """`addresses` lower-cased, each with its mailbox key, in order; PbmError for a bad
    one, none, or more than `addresses_per_signup`."""
    wanted = list(dict.fromkeys(a.lower() for a in addresses))
    _refuse_hidden(wanted)
    bad = [a for a in wanted if not valid_address(a)]
    if bad or not wanted:
        raise PbmError(phrase("bad_address", addresses=echoed(", ".join(bad)) or "(none)"))
    limit = ctx.config.addresses_per_signup
    if len(wanted) > limit:
        raise PbmError(phrase("too_many_addresses", count=len(wanted), limit=limit))
    return {a: consent.mailbox(ctx, a) for a in wanted}


def create_user(
    ctx: Context, userid: str, password: str, addresses: Sequence[str]
) -> tuple[User, list[UserAddress]]:
    """A new account and its addresses' rows, all unconfirmed (pbm.services.accounts.consent)."""
    userid = check_userid(ctx, userid)
    _check_password_text(password)
    wanted = _checked_addresses(ctx, addresses)
    user = User(
        userid=userid,
        userid_key=userid_key(userid),
        password_hash=hash_password(password, ctx.config.password_cost),
        created_at=ctx.now(),
    )
    ctx.session.add(user)
    ctx.session.flush()
    rows = queries.set_addresses(ctx.session, user.saved_id, wanted, ctx.now())
    log.info("new user %s %s", userid, list(wanted))
    return user, rows


def set_password(ctx: Context, user: User, new_password: str) -> None:
    _check_password_text(new_password)
    user.password_hash = hash_password(new_password, ctx.config.password_cost)
    ctx.session.add(user)


def set_user_addresses(
    ctx: Context, user: User, addresses: Sequence[str]
) -> tuple[list[str], list[UserAddress]]:
    """Make `addresses` the account's: those it had keep their confirmation; returns
    them all and the rows of the new ones (those of a mailbox the account confirmed
    already are confirmed at once, the others wait for their owner)."""
    wanted = _checked_addresses(ctx, addresses)
    added = queries.set_addresses(ctx.session, user.saved_id, wanted, ctx.now())
    consent.new_rows(ctx, user, added)
    return list(wanted), [row for row in added if row.confirmed_at is None]


def _refuse_hidden(addresses: Sequence[str]) -> None:
    """An address holding a control, bidi or invisible character is refused with the
    character named: it would be mailed, and shown to others, as it is."""
    for address in addresses:
        char = hidden_character(address)
        if char is not None:
            raise PbmError(
                wrapped(
                    phrase(
                        "address_hidden_char", address=echoed(shown(address)), char=_describe(char)
                    )
                )
            )


def sign_off(ctx: Context, user: User) -> None:
    """Refuse all challenges and stop all subscriptions; current games go on."""
    session = ctx.session

    for name in GAMES:
        setting = queries.type_setting(session, user.saved_id, name) or GameTypeSetting(
            user_id=user.saved_id, game=name
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
    active = [g for g in queries.games_of_user(ctx.session, user.saved_id, statuses=("active",))]
    if active:
        boards = ", ".join(f"{g.game} {g.board}" for g in active)
        raise PbmError(phrase("delete_has_games", boards=boards))
    sign_off(ctx, user)
    queries.set_addresses(ctx.session, user.saved_id, {}, ctx.now())
    user.password_hash = ""
    user.disabled = True
    ctx.session.add(user)
    log.info("deleted user %s", user.userid)


def reply_addresses(ctx: Context, user: User) -> list[str]:
    """Where mail for `user` goes: his first confirmed address (none: no mail)."""
    first = queries.first_addresses(ctx.session, [user.saved_id])
    return [first[user.saved_id]] if user.saved_id in first else []


def reply_addresses_of(ctx: Context, users: Sequence[User]) -> dict[int, list[str]]:
    """`reply_addresses` of each of `users` (by user id), asked at once."""
    first = queries.first_addresses(ctx.session, [u.saved_id for u in users])
    return {u.saved_id: [first[u.saved_id]] if u.saved_id in first else [] for u in users}


def sender_account(ctx: Context) -> User | None:
    """The one account the sender's address belongs to: None for a stranger, for the
    admin CLI (no sender), and for an address several accounts share."""
    known = queries.users_by_address(ctx.session, ctx.sender) if ctx.sender else []
    return known[0] if len(known) == 1 else None
