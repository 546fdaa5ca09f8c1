"""`pbm tournament create|list|show|enter|start|pairings|standings|withdraw|cancel`."""

from __future__ import annotations

from typing import Annotated

import typer

from pbm.cli.common import EXIT_USAGE, JsonOption, admin_context, emit, fail, known_game
from pbm.cli.questions import Act, Question, YesOption, ask_first
from pbm.games import GameError
from pbm.games.base import parse_option_pairs
from pbm.services.accounts.users import find_user
from pbm.services.context import Context
from pbm.services.play.bots import label
from pbm.services.tournaments import describe, entry, lookup, results, rounds
from pbm.texts import phrase, prose

NameArg = Annotated[str, typer.Argument(metavar="NAME", help="The tournament's name.")]
UseridArg = Annotated[str, typer.Argument(metavar="USERID", help="The player's userid.")]


def create(
    cli: typer.Context,
    name: NameArg,
    game: Annotated[
        str, typer.Argument(metavar="GAME", callback=known_game, help="Game or variant name.")
    ],
    kind: Annotated[
        str, typer.Option("--type", help="roundrobin, double, swiss or knockout.")
    ] = "roundrobin",
    rounds: Annotated[int, typer.Option(help="Swiss: the number of rounds (needed).")] = 0,
    option: Annotated[
        list[str] | None, typer.Option("--option", "-o", help="A game option name=value.")
    ] = None,
    nagtime: Annotated[float, typer.Option(help="Days before a reminder.")] = entry.NAG_DAYS,
    forfeittime: Annotated[float, typer.Option(help="Days before a forfeit.")] = entry.FORFEIT_DAYS,
    bots: Annotated[
        bool, typer.Option("--bots", help="Computer players may enter (pbm bot ...).")
    ] = False,
) -> None:
    """Open a tournament for entries."""
    # The service's own refusals name the mail's settings (rounds=N), not these options.
    swiss = entry.KIND_WORDS.get(kind.lower()) == "swiss"
    if swiss and rounds < 1:
        fail("a Swiss tournament needs its number of rounds: --rounds N (1 or more)", EXIT_USAGE)
    if not swiss and rounds:
        fail("--rounds is for a Swiss tournament (--type swiss) only", EXIT_USAGE)
    try:
        params = parse_option_pairs(option or [])
    except GameError as exc:
        fail(str(exc))
    with admin_context(cli) as ctx:
        t = entry.create(
            ctx,
            name,
            game,
            kind=kind,
            rounds=rounds,
            params=params,
            nag_days=nagtime,
            forfeit_days=forfeittime,
            bots=bots,
        )
        also = ", bots may enter" if t.bots else ""
        typer.echo(f"{t.name}: {describe.kind_text(t)} of {describe.game_title(t)}, open{also}")


def list_tournaments(cli: typer.Context, as_json: JsonOption = False) -> None:
    """Every tournament with its game, type, status and entrants."""
    with admin_context(cli) as ctx:
        rows, data = [], []
        for t in lookup.all_tournaments(ctx.session):
            count = len(lookup.entries(ctx.session, t))
            rows.append([t.name, t.game, describe.kind_text(t), t.status, count, t.prefix])
            data.append(
                {
                    "name": t.name,
                    "game": t.game,
                    "type": describe.kind_text(t),
                    "status": t.status,
                    "entrants": count,
                    "prefix": t.prefix,
                    "bots": t.bots,
                }
            )
    emit(data, as_json, ["name", "game", "type", "status", "entrants", "prefix"], rows)


def show(cli: typer.Context, name: NameArg) -> None:
    """A tournament's settings, entrants, pairings and standings."""
    with admin_context(cli) as ctx:
        t = lookup.find(ctx.session, name)
        people = lookup.entries(ctx.session, t)
        typer.echo(f"{t.name}: {describe.kind_text(t)} of {describe.game_title(t)}")
        typer.echo(f"status {describe.progress_text(t)}")
        typer.echo(
            f"boards {t.prefix}101..., reminder {t.nag_days:g} d, forfeit {t.forfeit_days:g} d"
        )
        typer.echo("bots " + ("allowed" if t.bots else "not allowed"))
        typer.echo("entrants: " + (", ".join(label(u) for _, u in people) or "none"))
        typer.echo("")
        typer.echo(describe.pairings_text(ctx.session, t))
        if t.status != "open":
            typer.echo("")
            typer.echo(describe.standings_text(ctx.session, t))


def enter(cli: typer.Context, name: NameArg, userid: UseridArg) -> None:
    """Enter a player (the admin's `tournament join`)."""
    with admin_context(cli) as ctx:
        t = lookup.find(ctx.session, name)
        user = find_user(ctx, userid)
        entry.join(ctx, t, user)
        count = len(lookup.entries(ctx.session, t))
        typer.echo(phrase("tournament_joined", userid=user.userid, name=t.name, count=count))


def start(cli: typer.Context, name: NameArg) -> None:
    """Seed the entrants and start the first round (every game of a round robin)."""
    with admin_context(cli) as ctx:
        t = lookup.find(ctx.session, name)
        rounds.start(ctx, t)
        players = len(lookup.entries(ctx.session, t))
        boards = sum(p.game_id is not None for p in lookup.pairings(ctx.session, t))
        typer.echo(
            f"{t.name}: {describe.kind_text(t)} of {describe.game_title(t)} started"
            f" with {players} players, {boards} boards, {describe.progress_text(t)}"
        )


def pairings(
    cli: typer.Context,
    name: NameArg,
    round_: Annotated[
        int | None, typer.Option("--round", help="Only this round (default: all).")
    ] = None,
) -> None:
    """Pairings and results (of one round)."""
    with admin_context(cli) as ctx:
        t = lookup.find(ctx.session, name)
        typer.echo(describe.pairings_text(ctx.session, t, round_))


def standings(cli: typer.Context, name: NameArg) -> None:
    """The table: points, Sonneborn-Berger, Buchholz."""
    with admin_context(cli) as ctx:
        typer.echo(describe.standings_text(ctx.session, lookup.find(ctx.session, name)))


def withdraw(cli: typer.Context, name: NameArg, userid: UseridArg) -> None:
    """Withdraw a player: his boards being played are forfeited, he is not paired again."""
    with admin_context(cli) as ctx:
        t = lookup.find(ctx.session, name)
        user = find_user(ctx, userid)
        # Before the start the entry just goes; after it his boards are forfeited.
        key = "tournament_left" if entry.leave(ctx, t, user) == "left" else "tournament_withdrawn"
        typer.echo(prose(key, userid=user.userid, name=t.name))


def cancel(cli: typer.Context, name: NameArg, yes: YesOption = False) -> None:
    """Cancel a tournament: its boards being played are removed, the entrants told.
    Asks first on a terminal; elsewhere it needs --yes."""
    ask_first(cli, yes, lambda ctx: _cancel_question(ctx, name))
    with admin_context(cli) as ctx:
        t = lookup.find(ctx.session, name)
        results.cancel(ctx, t)
        typer.echo(phrase("tournament_cancelled", name=t.name))


CANCEL = Act("cancel", "cancelling", "cancelled")


def _cancel_question(ctx: Context, name: str) -> Question:
    t = lookup.find(ctx.session, name)
    results.check_cancellable(t)  # the service's own refusal, before the question
    entrants = len(lookup.entries(ctx.session, t))
    playing = sum(
        p.game_id is not None and p.score is None for p in lookup.pairings(ctx.session, t)
    )
    return CANCEL.question(
        f"tournament {t.name}",
        f"{t.name} ({describe.kind_text(t)} of {describe.game_title(t)}, "
        f"{_count(entrants, 'entrant')}) ends: its boards being played ({playing}) are "
        "removed unrated, and its entrants told.",
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")
