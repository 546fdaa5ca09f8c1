"""Errors meant for people: `str(error)` is the sentence the player reads.

Anything that is not a PbmError (or a game's GameError) is a bug: the message that
caused it is rolled back, marked failed and kept for `pbm mail retry`.
"""

from __future__ import annotations

from collections.abc import Sequence


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
        super().__init__(f"{message}\nUsage: {usage}")
        self.usage = usage


class UnknownCommandError(PbmError):
    """A word that is no command; carries the closest known commands."""

    def __init__(self, word: str, suggestions: Sequence[str]) -> None:
        text = f"Unknown command '{word}'."
        if suggestions:
            text += " Did you mean: " + ", ".join(suggestions) + "?"
        text += "\nSend 'help' for the list of commands."
        super().__init__(text)
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


class StoreUnavailable(Exception):
    """The database cannot be reached (the MTA pipe exits 75 to retry later)."""
