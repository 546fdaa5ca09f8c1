"""The `pbm` command line: one typer app with a sub-app per noun."""

from __future__ import annotations

import typer

from pbm.cli.rules import rules_app

app = typer.Typer(
    name="pbm",
    help="pbm: a play-by-email server for abstract board games.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(rules_app, name="rules")


def main() -> None:
    app()
