"""Errors meant for people: `str(error)` is the sentence the player reads.

Anything that is not a PbmError (or a game's GameError) is a bug: the message that
caused it is rolled back, marked failed and kept for `pbm mail retry`; except a failure
of the store (StoreUnavailable, or what pbm.store.failures.classify recognises), which is
temporary: the message waits and is tried again.
"""

from __future__ import annotations

from collections.abc import Sequence

from pbm.texts import phrase


class PbmError(Exception):
    """A problem with what a player asked for; the message is mailed back."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(PbmError):
    """A command written with the wrong arguments; carries the command's usage."""

    def __init__(self, message: str, usage: str) -> None:
        # A usage of several forms (`show 101` or `show alice`) lists them one per line.
        forms = usage.split("\n")
        said = (
            phrase("usage_line", usage=usage)
            if len(forms) == 1
            else phrase("usage_forms", forms="\n".join(f"  {form}" for form in forms))
        )
        super().__init__(f"{message}\n{said}")
        self.usage = usage


class UnknownCommandError(PbmError):
    """A word that is no command; carries the closest known commands."""

    def __init__(self, word: str, suggestions: Sequence[str]) -> None:
        text = phrase("unknown_command", word=word)
        if suggestions:
            text += " " + phrase("unknown_command_near", suggestions=", ".join(suggestions))
        super().__init__(f"{text}\n{phrase('unknown_command_help')}")
        self.suggestions = tuple(suggestions)


class AuthError(PbmError):
    """A wrong userid or password, or a throttled sender."""


class NotFoundError(PbmError):
    """An unknown board or userid."""


class BoardError(PbmError):
    """A refused command about one board; the reply shows that board.

    `board_id` is the store id of the game the error is about.
    """

    def __init__(self, message: str, board_id: int) -> None:
        super().__init__(message)
        self.board_id = board_id


class NotAMoveError(BoardError):
    """A move text that is not a move in the game's notation (not merely illegal)."""


class StoreUnavailable(Exception):
    """The store cannot be used right now: locked, full, failing, missing, replaced, or
    its schema missing. Never a player's fault nor a bug, so the message waits: the pipe
    exits 75, the listeners answer 451, a stored message is tried again later.

    `kind` sorts the failures for the exit codes of the admin commands (see
    pbm.store.failures.Failure): busy, full, io, permission, unavailable, schema."""

    def __init__(self, message: str, kind: str = "unavailable") -> None:
        super().__init__(message)
        self.kind = kind


class SchemaNotReady(StoreUnavailable):
    """The schema is missing or older than this pbm, on a database pbm does not upgrade
    by itself (PostgreSQL): `pbm db upgrade` does it."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "schema")


# sysexits.h codes for operational errors, by StoreUnavailable.kind (see docs/mail-setup.md)
EX_UNAVAILABLE = 69  # the database cannot be used: unreachable, missing, not a database
EX_TEMPFAIL = 75  # try again later; what an MTA retries
EX_NOPERM = 77  # permission denied
EX_CONFIG = 78  # a bad configuration, or a schema to upgrade
EXIT_OF_KIND = {
    "busy": EX_TEMPFAIL,
    "full": EX_TEMPFAIL,
    "io": EX_TEMPFAIL,
    "permission": EX_NOPERM,
    "unavailable": EX_UNAVAILABLE,
    "schema": EX_CONFIG,
}
