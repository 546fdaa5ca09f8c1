"""`pbm user add|list|confirm|show|passwd|disable|enable|rename|delete|export|erase`."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from pbm.cli.common import (
    EXIT_USAGE,
    JsonOption,
    admin_context,
    bare_addresses,
    emit,
    fail,
    not_an_address,
    one_bare_address,
)
from pbm.cli.questions import Act, Question, YesOption, ask_first, on_terminal
from pbm.services.accounts import consent, erasure, my_data, users
from pbm.services.accounts import rename as renaming
from pbm.services.accounts.users import find_user
from pbm.services.context import Context
from pbm.services.mailing import bounces
from pbm.store import addresses, queries
from pbm.store.models import User

UseridArg = Annotated[
    str, typer.Argument(metavar="USERID", callback=not_an_address, help="The player's userid.")
]


def _password(password: str | None) -> str:
    """`--password`, else asked on the terminal, else the first line of a piped stdin
    (`printf '%s\\n' "$PW" | pbm user add ...`): a prompt there only warned and aborted."""
    if password:
        return password
    if on_terminal():
        return typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    line = sys.stdin.readline().rstrip("\r\n") if sys.stdin is not None else ""
    if not line:
        fail("no password: give --password, or its line on standard input", EXIT_USAGE)
    return line


def add(
    cli: typer.Context,
    userid: UseridArg,
    addresses: Annotated[
        list[str],
        typer.Argument(
            metavar="ADDRESS", callback=bare_addresses, help="Mail addresses (first: replies)."
        ),
    ],
    password: Annotated[
        str | None, typer.Option(help="Password (else asked, or read from piped stdin).")
    ] = None,
    confirmed: Annotated[
        bool,
        typer.Option(
            "--confirmed",
            help="The addresses are confirmed already (you know their owner); else each "
            "gets a confirmation request and nothing more until its owner answers.",
        ),
    ] = False,
) -> None:
    """Create an account."""
    secret = _password(password)
    with admin_context(cli) as ctx:
        user, rows = users.create_user(ctx, userid, secret, addresses)
        for row in rows:
            if confirmed:
                consent.confirm(ctx, row)
            else:
                consent.request(ctx, user, row)
        state = "confirmed" if confirmed else "confirmation requested"
        # the addresses as stored: checked, lower-cased, each once
        typer.echo(f"added {user.userid} <{', '.join(r.address for r in rows)}> ({state})")


def confirm(
    cli: typer.Context,
    userid: UseridArg,
    address: Annotated[
        str,
        typer.Argument(
            metavar="ADDRESS",
            callback=one_bare_address,
            help="One of the account's addresses.",
        ),
    ],
) -> None:
    """Confirm an address for its account (as its owner's answer to the request would:
    a mailbox bounces had disabled is mailed again)."""
    enabled = ""
    with admin_context(cli) as ctx:
        user = users.find_user(ctx, userid)
        row = next(
            (
                r
                for r in addresses.rows_of(ctx.session, user.saved_id)
                if r.address == address.lower()
            ),
            None,
        )
        if row is None:
            fail(f"{address} is not an address of {user.userid}")
        else:
            consent.confirm(ctx, row)
            # as the owner's confirmation does (pbm.commands.account.Confirm): the
            # operator had no other way to mail a mailbox again that bounces disabled
            enabled = bounces.enable(ctx, row.address)
    typer.echo(
        f"{address} confirmed for {userid}"
        + (", and mailed again (bounces had disabled it)" if enabled else "")
    )


def list_users(
    cli: typer.Context,
    as_json: JsonOption = False,
    invalid: Annotated[
        bool,
        typer.Option("--invalid", help="Only accounts whose userid breaks today's rules, and why."),
    ] = False,
    unconfirmed: Annotated[
        bool,
        typer.Option("--unconfirmed", help="Only accounts with an address nobody confirmed."),
    ] = False,
) -> None:
    """List every account (userids with invisible characters shown as <U+XXXX>)."""
    with admin_context(cli) as ctx:
        rows = []
        data = []
        for user in queries.all_users(ctx.session):
            reason = users.stored_userid_problem(user)
            if invalid and reason is None:
                continue
            rows_of = addresses.rows_of(ctx.session, user.saved_id)
            if unconfirmed and all(r.confirmed_at for r in rows_of):
                continue
            # An address nobody confirmed is marked with a "?".
            shown_addresses = [r.address + ("" if r.confirmed_at else "?") for r in rows_of]
            active = len(queries.games_of_user(ctx.session, user.saved_id, statuses=("active",)))
            # a deleted account was listed as "disabled", which `pbm user enable` then
            # said it did not know
            state = "deleted" if users.deleted(user) else "disabled" if user.disabled else "active"
            row: list[object] = [
                users.shown(user.userid),
                state,
                active,
                " ".join(shown_addresses),
            ]
            item: dict[str, object] = {
                "userid": user.userid,
                "status": state,
                "active_games": active,
                "addresses": [r.address for r in rows_of],
                "unconfirmed": [r.address for r in rows_of if not r.confirmed_at],
            }
            if invalid:
                row.append(reason)
                item.update(shown=users.shown(user.userid), key=user.userid_key, reason=reason)
            rows.append(row)
            data.append(item)
    headers = ["userid", "status", "active boards", "addresses"] + (["reason"] if invalid else [])
    emit(data, as_json, headers, rows)


def show(cli: typer.Context, userid: UseridArg, as_json: JsonOption = False) -> None:
    """Show one account and its boards."""
    with admin_context(cli) as ctx:
        user = users.find_user(ctx, userid)
        games = queries.games_of_user(ctx.session, user.saved_id)
        data: dict[str, Any] = {
            "userid": user.userid,
            "disabled": user.disabled,
            "created_at": user.created_at.isoformat(),
            "addresses": queries.addresses_of(ctx.session, user.saved_id),
            "games": [{"game": g.game, "board": g.board, "status": g.status} for g in games],
        }
        waiting = {
            r.address for r in addresses.rows_of(ctx.session, user.saved_id) if not r.confirmed_at
        }
        data["mail"] = [_mail_health(ctx, a, a not in waiting) for a in data["addresses"]]
    if as_json:
        emit(data, True, [], [])
        return
    typer.echo(f"userid:    {users.shown(user.userid)}")
    typer.echo(f"status:    {'disabled' if user.disabled else 'active'}")
    typer.echo(f"created:   {user.created_at:%Y-%m-%d %H:%M} UTC")
    typer.echo(f"addresses: {' '.join(data['addresses']) or 'none'}")
    for health in data["mail"]:
        typer.echo(f"  {health['address']}: {health['state']}, bounce score {health['score']:g}")
    # under a heading of their own: they read as more lines about the last address
    typer.echo(f"boards:    {len(games) or 'none'}")
    for g in games:
        typer.echo(f"  {g.game:<12} {g.board:>6}  {g.status}")


def _mail_health(ctx: Context, address: str, confirmed: bool) -> dict[str, Any]:
    """Whether mail reaches `address` (pbm.services.mailing.bounces, consent): its score
    and state; an unconfirmed one showed as "mailed", though it gets nothing else."""
    row = bounces.health_of(ctx, address)
    state = "mailed"
    if not confirmed:
        state = "not confirmed: mailed nothing but its confirmation request"
    elif row is not None and row.disabled_at is not None:
        state = f"disabled by bounces since {row.disabled_at:%Y-%m-%d}"
    elif row is not None and row.complained_at is not None:
        state = f"no notifications: spam complaint on {row.complained_at:%Y-%m-%d}"
    score = 0.0 if row is None else row.score
    return {"address": address, "confirmed": confirmed, "score": score, "state": state}


def passwd(
    cli: typer.Context,
    userid: UseridArg,
    password: Annotated[
        str | None, typer.Option(help="New password (else asked, or read from piped stdin).")
    ] = None,
) -> None:
    """Set a player's password."""
    secret = _password(password)
    with admin_context(cli) as ctx:
        user = users.find_user(ctx, userid)
        # a bot's password would let whoever knows it move and resign for the bot by mail
        if user.bot:
            fail(f"{user.userid} is a computer player: a bot has no password (docs/bots.md)")
        users.set_password(ctx, user, secret)
    typer.echo(f"password of {userid} changed")


def _set_disabled(cli: typer.Context, userid: str, value: bool) -> bool:
    """Whether the account changed (it said "enabled" of one that was never disabled)."""
    with admin_context(cli) as ctx:
        user = users.find_user(ctx, userid)
        if user.bot:  # half a stop: it refused challenges, moved on, and listed as playing
            verb = "disable" if value else "enable"
            fail(f"{user.userid} is a computer player: use pbm bot {verb} {user.userid}")
        if user.disabled == value:
            return False
        user.disabled = value
        ctx.session.add(user)
        return True


def disable(cli: typer.Context, userid: UseridArg) -> None:
    """Lock an account: its passwords and reply tokens stop working."""
    changed = _set_disabled(cli, userid, True)
    typer.echo(f"{userid} disabled" if changed else f"{userid} was disabled already")


def enable(cli: typer.Context, userid: UseridArg) -> None:
    """Unlock an account."""
    changed = _set_disabled(cli, userid, False)
    typer.echo(f"{userid} enabled" if changed else f"{userid} was not disabled")


def delete(cli: typer.Context, userid: UseridArg, yes: YesOption = False) -> None:
    """Delete an account that has no active boards. Asks first on a terminal; elsewhere
    it needs --yes."""
    ask_first(cli, yes, lambda ctx: _deletion_question(ctx, userid))
    with admin_context(cli) as ctx:
        users.delete_user(ctx, _deletable(ctx, userid))
    typer.echo(f"{userid} deleted")


def _deletable(ctx: Context, userid: str) -> User:
    """The account `pbm user delete` may delete (a bot's goes with pbm bot remove); a
    deleted one is unknown to find_user, as to every command."""
    user = users.find_user(ctx, userid)
    if user.bot:  # its settings row would stay behind
        fail(f"{user.userid} is a computer player: remove it with pbm bot remove {user.userid}")
    return user


DELETE = Act("delete", "deleting", "deleted")


def _deletion_question(ctx: Context, userid: str) -> Question:
    name = _deletable(ctx, userid).userid
    return DELETE.question(
        name,
        f"{name}'s addresses and settings go and his password stops working; his "
        "finished games keep his userid.",
    )


def rename(
    cli: typer.Context,
    userid: UseridArg,
    new: Annotated[
        str,
        typer.Argument(
            metavar="NEW",
            callback=not_an_address,
            help="The new userid (the rules of signup; not another account's).",
        ),
    ],
) -> None:
    """Rename an account: its boards, tournaments, ratings and settings follow; commands
    that name the old userid are refused from now on, and the player is mailed his new
    userid at his confirmed address (docs/security.md)."""
    with admin_context(cli) as ctx:
        user = users.find_user(ctx, userid)
        old, bot = user.userid, user.bot
        done = renaming.rename_user(ctx, user, new)
    told = (
        ""  # a bot reads no mail
        if bot
        else f"; told at {done.told}"
        if done.told
        else "; he has no confirmed address, so tell him yourself"
    )
    typer.echo(f"renamed {users.shown(old)} to {done.userid}{told}")


def export(cli: typer.Context, userid: UseridArg) -> None:
    """Print, as JSON, everything pbm keeps about a player (what `mydata` mails him)."""
    with admin_context(cli) as ctx:
        typer.echo(my_data.personal_json(ctx, find_user(ctx, userid)), nl=False)


def erase(cli: typer.Context, userid: UseridArg, yes: YesOption = False) -> None:
    """Erase a player but keep his games: his personal data goes, his userid in the
    games becomes a pseudonym, his running boards are resigned unrated. Asks first on a
    terminal; elsewhere it needs --yes."""
    ask_first(cli, yes, lambda ctx: _erasure_question(ctx, userid))
    with admin_context(cli) as ctx:
        user = find_user(ctx, userid)
        name = user.userid  # the account's own spelling, gone once erased
        pseudonym = erasure.erase_user(ctx, user)
        typer.echo(f"erased {name}: the games now name him {pseudonym}")


ERASE = Act("erase", "erasing", "erased")


def _erasure_question(ctx: Context, userid: str) -> Question:
    user = find_user(ctx, userid)
    name = user.userid
    running = len(queries.games_of_user(ctx.session, user.saved_id, statuses=("active",)))
    boards = {0: "", 1: ", and his running board is resigned"}.get(
        running, f", and his {running} running boards are resigned"
    )
    return ERASE.question(name, f"{name}'s addresses, mails and settings go for good{boards}.")
