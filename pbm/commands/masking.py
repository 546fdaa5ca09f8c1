"""Passwords out of the commands pbm echoes back: the "(Your command: ...)" of an error
mail, the list of commands not run, the quoted original and the log show a command
with each password written `******`.

Which words are passwords comes from the command's usage (pbm.commands.registry): the
words in the password places (`password`, `current-password`, `new-password` after a
`userid`) of the first usage form the words fit. A misspelt verb reads as the nearest
command when the words fit one of its forms (`quarto chalenge alice bob` has no
password); otherwise, and when the verb is unknown, the line still carries the
password where every command puts it, so it is tried against every form of the verb's
scope (`quarto plce 103 frank secret a1` masks `secret`); a board number mistyped or
left out does not hide the password behind it (`quarto resign #101 frank secret`). The
words players write for a command of another name (`offer draw`, `take back`,
`decline`) read as that command, two words shifting the password one place on. A word
fits a `userid` place only when it could be a userid, so a move such as `setup c5=1
d4=2 d5=3 c3=4` is never masked.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from pbm.commands.base import Command, usage_forms
from pbm.commands.registry import (
    ACCOUNT_COMMANDS,
    ACCOUNT_VERBS,
    BOARD_WORD,
    GAME_COMMANDS,
    GAME_VERBS,
    game_named,
    game_names,
    game_verb_without_game,
    near_command,
    starts_command,
)
from pbm.mail.headers import strip_subject_prefixes
from pbm.services.accounts.users import userid_problem
from pbm.services.play.moves import EVENT_WORDS_NEAR

MASK = "******"

_WORD = re.compile(r"\S+")
# A fixed word of a usage (`create`, `join|leave|start`), unlike the placeholders.
_LITERAL = re.compile(r"[a-z]+(?:\|[a-z0-9]+)*")
_PLACEHOLDERS = {"board", "userid", "move", "n", "name", "game", "address", "round"}
# How close a misspelt verb or game name must be to read as it (difflib's ratio): a
# line's first word as close as pbm.commands.registry.near_command asks for an answer.
_NEAR = 0.6
_NEAR_FIRST = 0.75


def mask_line(line: str) -> str:
    """`line` with the passwords of the command it holds written `******`."""
    spans = [m for m in _WORD.finditer(line) if m.group() != "**"]
    found = _commands_of([m.group() for m in spans])
    if found is None:
        return line
    named, others, start = found
    args = [m.group() for m in spans[start:]]
    places = _places(named, args) if named is not None else None
    if places is None and named is not None and start == 2:  # `GAME VERB ...`, no reply
        places = _places_without_board(named, args)
    if places is None:
        for command in others:
            places = _places(command, args)
            if places:
                break
    for place in sorted(places or (), reverse=True):
        span = spans[start + place]
        line = line[: span.start()] + MASK + line[span.end() :]
    return line


def mask_text(text: str) -> str:
    """Every command line of a quoted mail masked: its `Subject:` line (after any
    Re:/Fwd: markers) and each line that begins like a command."""
    lines = []
    for line in text.split("\n"):
        if line.startswith("Subject:"):
            subject = strip_subject_prefixes(line[len("Subject:") :])
            at = line.rfind(subject) if subject else -1
            if at >= 0:
                line = line[:at] + mask_line(subject)
        elif starts_command(line) or near_command(line) or game_verb_without_game(line):
            line = mask_line(line)
        lines.append(line)
    return "\n".join(lines)


def _places(command: Command, args: Sequence[str]) -> set[int] | None:
    """The indexes of `args` (the words after the verb) that are passwords in the first
    usage form of `command` they fit, or None when they fit none."""
    for form in usage_forms(command.usage):
        places = _fit(form.split(), args)
        if places is not None:
            return places
    return None


def _places_without_board(command: Command, args: Sequence[str]) -> set[int] | None:
    """The password places when the words fit no form of `command` because its board
    number was mistyped (`#101`, `101.`) or left out (`quarto resign alice secret`):
    the first word read as the board whatever it is, or as the userid. A first word
    that could be a userid may be either, so both readings are masked."""
    for form in usage_forms(command.usage):
        board, *rest = form.split() or [""]  # `help`'s usage has an empty form
        if not board.startswith("board"):
            continue
        mistyped = _fit(["move", *rest], args)
        left_out = _fit(rest, args) if args and _is_userid(args[0]) else None
        if mistyped is not None or left_out is not None:
            return (mistyped or set()) | (left_out or set())
    return None


def _commands_of(words: Sequence[str]) -> tuple[Command | None, list[Command], int] | None:
    """The command a line's words name (None when its verb is unknown), the other
    commands it may be, and where their arguments begin. An exact or misspelt verb
    names its command: when the words fit one of its forms, its password places are
    the line's, even none (`quarto chalenge alice bob` has none). When they fit none
    of them, or the verb is unknown, the password sits where every command of the
    verb's scope puts it, so those are tried in turn."""
    if not words:
        return None
    first = words[0].lower()
    if first in ACCOUNT_VERBS:
        return ACCOUNT_VERBS[first], [], 1
    if first in GAME_VERBS:  # the game left out
        return GAME_VERBS[first], [], 1
    second = words[1].lower() if len(words) > 1 else ""
    if second in GAME_VERBS:
        return GAME_VERBS[second], [], 2
    for at in (1, 0):  # `quarto offer draw 101 ...`, or the game left out
        meant = _meant(words, at)
        if meant is not None:
            return meant[0], [], meant[1]
    if second and (game_named(first) is not None or _near(first, game_names(), _NEAR_FIRST)):
        return _nearest(second, GAME_VERBS), list(GAME_COMMANDS), 2
    if _near(first, [*ACCOUNT_VERBS, *GAME_VERBS], _NEAR_FIRST):
        verbs = {**GAME_VERBS, **ACCOUNT_VERBS}
        return _nearest(first, verbs), [*ACCOUNT_COMMANDS, *GAME_COMMANDS], 1
    return None


def _meant(words: Sequence[str], at: int) -> tuple[Command, int] | None:
    """The command meant by the words players write for it at `at` (`offer draw`, `take
    back`, `decline`: pbm.services.play.moves.EVENT_WORDS_NEAR), and where its arguments
    begin: a verb of two words shifts the password one place on."""
    for length in (2, 1):
        said = " ".join(words[at : at + length]).lower()
        if len(words) >= at + length and said in EVENT_WORDS_NEAR:
            return GAME_VERBS[EVENT_WORDS_NEAR[said]], at + length
    return None


def _near(word: str, known: Sequence[str], cutoff: float = _NEAR) -> str | None:
    near = difflib.get_close_matches(word, known, n=1, cutoff=cutoff)
    return near[0] if near else None


def _nearest(word: str, verbs: dict[str, Command]) -> Command | None:
    near = _near(word, list(verbs))
    return verbs[near] if near else None


def _is_userid(word: str) -> bool:
    """Whether a word could be a userid (and is not a board number such as `a101`)."""
    return not BOARD_WORD.fullmatch(word) and userid_problem(word) is None


def _fit(tokens: Sequence[str], args: Sequence[str]) -> set[int] | None:
    """The password places of one usage form, or None when the words do not fit it.

    Each token takes one word, a token with `...` every word that fits it, and an
    optional one (`[userid...]`, `[-option=value...]`) none when the word does not fit.
    The words fit when they run out first or when every one was taken; after a password
    the rest may differ (the passwords are found by then). An optional part of several
    words (`[since YYYY-MM-DD]`) is not followed: the words from there on fit."""
    places: set[int] = set()
    after_userid = False
    at = 0
    for token in tokens:
        if token.startswith(("[", "(")) and not token.endswith("]"):
            return places
        optional = token.startswith("[")
        element = token.strip("[]")
        repeats = element.endswith("...")
        element = element.removesuffix("...")
        taken = 0
        while at < len(args) and (repeats or not taken):
            if "password" in element and after_userid:
                places.add(at)
            elif not _takes(element, args[at].lower()):
                break
            after_userid = after_userid or "userid" in element
            at += 1
            taken += 1
        if not taken and not optional:
            return places if at >= len(args) or places else None
    return places if at >= len(args) or places else None


def _takes(element: str, word: str) -> bool:
    """Whether a word fits one element of a usage (a placeholder such as `move` or
    `NAME` takes any word)."""
    if "userid" in element:
        return _is_userid(word)
    if element.startswith("board"):
        return bool(BOARD_WORD.fullmatch(word)) or (element.endswith("|all") and word == "all")
    if element.startswith("-"):
        return word.startswith("-")
    if _LITERAL.fullmatch(element) and element not in _PLACEHOLDERS:
        return word in element.split("|")
    return True
