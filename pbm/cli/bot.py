"""`pbm bot add|add-builtin|list|show|disable|enable|remove`: computer players."""

from __future__ import annotations

from typing import Annotated

import typer

from pbm.bots.sandbox import SandboxError, user_ids
from pbm.cli.common import EXIT_CONFIG, JsonOption, admin_context, emit, fail, known_games
from pbm.cli.questions import Act, Question, YesOption, ask_first
from pbm.config import Config
from pbm.services.play import bots

NameArg = Annotated[str, typer.Argument(metavar="NAME", help="The bot's userid.")]


def require_engine_user(cfg: Config) -> None:
    """End a command that runs engines when [bots] engine_user cannot be used (pbm is
    not root, or there is no such user): a clear line, not a failure at every move."""
    if cfg.engine_user:
        try:
            user_ids(cfg.engine_user)
        except SandboxError as exc:
            fail(str(exc), EXIT_CONFIG)


def _games_text(info: bots.BotInfo) -> str:
    return ",".join(info.games) or "all"


def _line(info: bots.BotInfo) -> str:
    limit = "no limit" if info.max_games is None else f"max {info.max_games}"
    return f"{info.userid}: level {info.level}, {info.engine}, games {_games_text(info)}, {limit}"


def add(
    cli: typer.Context,
    name: NameArg,
    games: Annotated[
        str,
        typer.Option(
            callback=known_games, help="Games it plays, comma-separated (default: every game)."
        ),
    ] = "",
    level: Annotated[int, typer.Option(help="Strength, 1 (weak) to 4 (full search).")] = 4,
    engine: Annotated[
        str, typer.Option(help='"builtin", or an outside engine\'s command line.')
    ] = bots.BUILTIN,
    max_games: Annotated[
        int | None, typer.Option(help="Active boards at most (default: no limit).")
    ] = None,
) -> None:
    """Add a bot: an account that players challenge like any other."""
    with admin_context(cli) as ctx:
        info = bots.add_bot(
            ctx, name, games=games.split(","), level=level, engine=engine, max_games=max_games
        )
        typer.echo(f"added bot {_line(info)}")


def add_builtin(cli: typer.Context) -> None:
    """Add the built-in bots, one per level: pbmbot1 (weakest) to pbmbot4."""
    with admin_context(cli) as ctx:
        made = bots.add_builtin(ctx)
        for info in made:
            typer.echo(f"added bot {_line(info)}")
        if not made:
            typer.echo("the built-in bots are there already")


def list_bots(cli: typer.Context, as_json: JsonOption = False) -> None:
    """List the bots."""
    with admin_context(cli) as ctx:
        infos = bots.list_bots(ctx)
        rows = [
            [
                i.userid,
                i.level,
                i.engine,
                _games_text(i),
                "-" if i.max_games is None else i.max_games,
                i.active,
                "disabled" if i.disabled else "playing",
                i.failures,
            ]
            for i in infos
        ]
        headers = ["bot", "level", "engine", "games", "max", "active", "status", "failures"]
        emit([i.as_dict() for i in infos], as_json, headers, rows)


def show(cli: typer.Context, name: NameArg, as_json: JsonOption = False) -> None:
    """A bot's settings, and what its outside engine did wrong."""
    with admin_context(cli) as ctx:
        info = bots.show_bot(ctx, name)
        emit(info.as_dict(), as_json, ["setting", "value"], _settings(info))


def _settings(info: bots.BotInfo) -> list[list[object]]:
    """`pbm bot show`'s rows, in words as `pbm bot list` writes them (not None, False, [])."""
    at = info.last_failure_at
    return [
        ["userid", info.userid],
        ["games", _games_text(info)],
        ["level", info.level],
        ["engine", info.engine],
        ["max_games", "no limit" if info.max_games is None else info.max_games],
        ["disabled", "yes" if info.disabled else "no"],
        ["active", info.active],
        ["moves", info.moves],
        ["failures", info.failures],
        ["fallbacks", info.fallbacks],
        ["last_failure", info.last_failure or "-"],
        ["last_failure_at", "-" if at is None else f"{at:%Y-%m-%d %H:%M} UTC"],
    ]


def disable(cli: typer.Context, name: NameArg) -> None:
    """Stop a bot: it refuses challenges and its boards wait (their clocks run)."""
    with admin_context(cli) as ctx:
        bots.set_disabled(ctx, name, True)
        typer.echo(f"disabled bot {name}")


def enable(cli: typer.Context, name: NameArg) -> None:
    """Let a disabled bot play again."""
    with admin_context(cli) as ctx:
        bots.set_disabled(ctx, name, False)
        typer.echo(f"enabled bot {name}")


def remove(cli: typer.Context, name: NameArg, yes: YesOption = False) -> None:
    """Remove a bot with no active boards (its userid stays, for the finished games).
    Asks first on a terminal; elsewhere it needs --yes."""
    ask_first(cli, yes, lambda ctx: _removal_question(bots.show_bot(ctx, name)))
    with admin_context(cli) as ctx:
        bots.remove_bot(ctx, name)
        typer.echo(f"removed bot {name}")


REMOVE = Act("remove", "removing", "removed")


def _removal_question(info: bots.BotInfo) -> Question:
    return REMOVE.question(
        f"bot {info.userid}",
        f"{_line(info)}: it stops playing for good; its userid stays, for its finished games.",
    )
