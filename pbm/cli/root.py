"""The `pbm` command line: one typer app with a sub-app per noun.

Every command is registered here, in the order `pbm --help` lists them; the modules of
pbm.cli only define them. The root callback puts the options of `pbm` itself, with the
configuration, in the context object (pbm.cli.common.CliState), which every command
reads through its `typer.Context`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from pbm.cli import (
    bot,
    db,
    game,
    helpcmd,
    jobs,
    mail,
    ratings,
    records,
    rules,
    run,
    serve,
    tournament,
    user,
    vacation,
)
from pbm.cli.common import CliState, PbmGroup
from pbm.config import ENV_CONFIG

# Plain help: typer's rich panels print a type after every flag (`--json <bool>`).
HELP: dict[str, Any] = {"rich_markup_mode": None, "no_args_is_help": True}


def root(
    cli: typer.Context,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            envvar=ENV_CONFIG,
            show_envvar=True,
            help="Configuration file (default: the embedded defaults).",
        ),
    ] = None,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", help="Show the traceback of an operational error (database, config)."
        ),
    ] = False,
) -> None:
    """pbm: a play-by-email server for abstract board games."""
    # Imported here: `pbm --help` needs none of what the composition root registers.
    from pbm.app import register

    register()
    cli.obj = CliState(config_file, debug)


app = typer.Typer(name="pbm", add_completion=False, cls=PbmGroup, **HELP)
app.callback()(root)

rules_app = typer.Typer(help="Play and inspect the games' rules locally.", **HELP)
rules_app.command("list")(rules.list_games)
rules_app.command("help")(rules.game_help)
rules_app.command("play")(rules.play)
rules_app.command("perft")(rules.perft_command)
app.add_typer(rules_app, name="rules")

db_app = typer.Typer(help="Create, upgrade and back up the database.", **HELP)
db_app.command("init")(db.init)
db_app.command("upgrade")(db.upgrade)
db_app.command("current")(db.current)
db_app.command("backup")(db.backup)
app.add_typer(db_app, name="db")

user_app = typer.Typer(help="Manage player accounts.", **HELP)
user_app.command("add")(user.add)
user_app.command("list")(user.list_users)
user_app.command("show")(user.show)
user_app.command("passwd")(user.passwd)
user_app.command("disable")(user.disable)
user_app.command("enable")(user.enable)
user_app.command("delete")(user.delete)
app.add_typer(user_app, name="user")

bot_app = typer.Typer(help="Manage computer players (docs/bots.md).", **HELP)
bot_app.command("add")(bot.add)
bot_app.command("add-builtin")(bot.add_builtin)
bot_app.command("list")(bot.list_bots)
bot_app.command("show")(bot.show)
bot_app.command("disable")(bot.disable)
bot_app.command("enable")(bot.enable)
bot_app.command("remove")(bot.remove)
app.add_typer(bot_app, name="bot")

game_app = typer.Typer(help="Inspect and manage boards.", **HELP)
game_app.command("list")(game.list_games)
game_app.command("show")(game.show)
game_app.command("new")(game.new)
game_app.command("abort")(game.abort)
game_app.command("adjudicate")(game.adjudicate)
game_app.command("undo")(game.undo)
game_app.command("replay")(game.replay_command)
game_app.command("export")(records.export)
game_app.command("preview")(records.preview)
game_app.command("import")(records.import_command)
app.add_typer(game_app, name="game")

mail_app = typer.Typer(help="Process mail and inspect the message store.", **HELP)
mail_app.command("process")(mail.process)
mail_app.command("retry")(mail.retry)
mail_app.command("failed")(mail.failed)
mail_app.command("outbox")(mail.outbox)
mail_app.command("bounces")(mail.bounces_command)
mail_app.command("send")(serve.send_command)
mail_app.command("status")(serve.status_command)
mail_app.command("dkim-key")(mail.dkim_key)
mail_app.command("doctor")(mail.mail_doctor)
app.add_typer(mail_app, name="mail")

app.command("serve")(serve.serve_command)

ratings_app = typer.Typer(help="Ratings per game type (pbmserv's and Glicko-2).", **HELP)
ratings_app.command("show")(ratings.show)
ratings_app.command("recompute")(ratings.recompute_command)
app.add_typer(ratings_app, name="ratings")

jobs_app = typer.Typer(help="Periodic jobs of correspondence play.", **HELP)
jobs_app.command("run")(jobs.run)
app.add_typer(jobs_app, name="jobs")

tournament_app = typer.Typer(help="Run tournaments.", **HELP)
tournament_app.command("create")(tournament.create)
tournament_app.command("list")(tournament.list_tournaments)
tournament_app.command("show")(tournament.show)
tournament_app.command("enter")(tournament.enter)
tournament_app.command("start")(tournament.start)
tournament_app.command("pairings")(tournament.pairings)
tournament_app.command("standings")(tournament.standings)
tournament_app.command("withdraw")(tournament.withdraw)
tournament_app.command("cancel")(tournament.cancel)
app.add_typer(tournament_app, name="tournament")

app.command("run")(run.run)
app.command("vacation")(vacation.vacation)
app.command("help")(helpcmd.help_command)


def main() -> None:
    app()
