"""The question before a command that nothing undoes (`pbm user delete|erase`, `pbm game
abort`, `pbm tournament cancel`, `pbm bot remove`, `pbm db restore`): on a terminal it
says what the command will do and asks; elsewhere (a script, cron) it refuses with one
line unless the command was given --yes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from pbm.cli.common import EXIT_USAGE, admin_context, fail

if TYPE_CHECKING:
    from pbm.services.context import Context

YesOption = Annotated[
    bool, typer.Option("--yes", help="Act without asking (scripts; there is no undo).")
]


def on_terminal() -> bool:
    """Whether someone at a terminal can answer a question."""
    return sys.stdin is not None and sys.stdin.isatty()


@dataclass(frozen=True)
class Question:
    """What a command that nothing undoes says before it acts: `doing` names the act
    ("erasing alice"), `effects` what it does, `ask` the question, `declined` the
    line of a "no"."""

    doing: str
    effects: str
    ask: str
    declined: str


@dataclass(frozen=True)
class Act:
    """What a command does, as its questions say it: `Act("erase", "erasing", "erased")`."""

    verb: str
    doing: str
    done: str

    def question(self, what: str, effects: str) -> Question:
        """The question before doing this to `what` ("bot quartobot")."""
        return Question(
            doing=f"{self.doing} {what}",
            effects=effects,
            ask=f"{self.verb.capitalize()} {what}?",
            declined=f"{what} not {self.done}",
        )


def confirm_or_refuse(question: Question) -> None:
    """Go on only if the operator says yes at a terminal; elsewhere (a script, a pipe)
    refuse, naming --yes, since nobody can answer (exit 2)."""
    if not on_terminal():
        fail(f"{question.doing} cannot be undone: run it again with --yes", EXIT_USAGE)
    typer.echo(question.effects)
    if not typer.confirm(question.ask, default=False):
        fail(question.declined)


def ask_first(cli: typer.Context, yes: bool, describe: Callable[[Context], Question]) -> None:
    """The question of a command that nothing undoes, unless --yes: `describe` looks up
    what it names in a transaction of its own, ended before the operator is asked, so
    that no write lock waits on him (its refusals, an unknown name, come first)."""
    if yes:
        return
    with admin_context(cli) as ctx:
        question = describe(ctx)
    confirm_or_refuse(question)
