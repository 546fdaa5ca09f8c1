"""The `pbm` command line: one typer app with a sub-app per noun."""

from __future__ import annotations

import typer

from pbm.cli.db import db_app
from pbm.cli.game import game_app
from pbm.cli.mail import mail_app
from pbm.cli.rules import rules_app
from pbm.cli.run import run
from pbm.cli.user import user_app

app = typer.Typer(
    name="pbm",
    help="pbm: a play-by-email server for abstract board games.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(rules_app, name="rules")
app.add_typer(db_app, name="db")
app.add_typer(user_app, name="user")
app.add_typer(game_app, name="game")
app.add_typer(mail_app, name="mail")
app.command("run")(run)


def main() -> None:
    app()
