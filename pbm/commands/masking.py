"""Passwords out of the commands pbm echoes back: the "(Your command: ...)" of an error
mail, the list of commands not run, the quoted original and the log show a command
with each password written `******`.

Which words are passwords comes from the command's usage (pbm.commands.registry): the
words in the password places (`password`, `current-password`, `new-password` after a
`userid`) of the first usage form the words fit. A line whose verb is misspelt or
unknown still carries the password where every command puts it: it is tried against
the nearest command's forms, then against every form of its scope (`quarto plce 103
frank secret a1` masks `secret`). A word fits a `userid` place only when it could be a
userid, so a move such as `setup c5=1 d4=2 d5=3 c3=4` is never masked.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from pbm.commands.base import Command
from pbm.commands.helptext import usage_forms
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
    commands, start = found
    args = [m.group() for m in spans[start:]]
    places: set[int] = set()
    for command in commands:
        places = password_places(command, args)
        if places:
            break
    for place in sorted(places, reverse=True):
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


def password_places(command: Command, args: Sequence[str]) -> set[int]:
    """The indexes of `args` (the words after the verb) that are passwords."""
    for form in usage_forms(command.usage):
        places = _fit(form.split(), args)
        if places is not None:
            return places
    return set()


def _commands_of(words: Sequence[str]) -> tuple[list[Command], int] | None:
    """The commands a line's words may name, the likeliest first, and where their
    arguments begin. An exact verb names one command; a misspelt or unknown verb after
    a game's name, or a misspelt verb alone, names its nearest command and then every
    command of its scope, since the password sits in the same place in each."""
    if not words:
        return None
    first = words[0].lower()
    if first in ACCOUNT_VERBS:
        return [ACCOUNT_VERBS[first]], 1
    if first in GAME_VERBS:  # the game left out
        return [GAME_VERBS[first]], 1
    second = words[1].lower() if len(words) > 1 else ""
    if second in GAME_VERBS:
        return [GAME_VERBS[second]], 2
    if second and (game_named(first) is not None or _near(first, game_names(), _NEAR_FIRST)):
        return _nearest_first(second, GAME_VERBS, GAME_COMMANDS), 2
    if _near(first, [*ACCOUNT_VERBS, *GAME_VERBS], _NEAR_FIRST):
        verbs = {**GAME_VERBS, **ACCOUNT_VERBS}
        return _nearest_first(first, verbs, [*ACCOUNT_COMMANDS, *GAME_COMMANDS]), 1
    return None


def _near(word: str, known: Sequence[str], cutoff: float = _NEAR) -> str | None:
    near = difflib.get_close_matches(word, known, n=1, cutoff=cutoff)
    return near[0] if near else None


def _nearest_first(word: str, verbs: dict[str, Command], every: Sequence[Command]) -> list[Command]:
    near = _near(word, list(verbs))
    first = [verbs[near]] if near else []
    return [*first, *(command for command in every if command not in first)]


def _is_userid(word: str) -> bool:
    """Whether a word could be a userid (and is not a board number such as `a101`)."""
    return not BOARD_WORD.fullmatch(word) and userid_problem(word) is None


def _fit(tokens: Sequence[str], args: Sequence[str]) -> set[int] | None:
    """The password places of one usage form, or None when the words do not fit it (a
    word after the last password may differ: the passwords are found by then)."""
    places: set[int] = set()
    after_userid = False
    for i, token in enumerate(tokens):
        if i >= len(args) or token.startswith(("[", "(")):
            break
        word = args[i].lower()
        if "password" in token and after_userid:
            places.add(i)
            continue
        if "userid" in token:
            fits = _is_userid(word)
            after_userid = True
        elif token.startswith("board"):
            fits = bool(BOARD_WORD.fullmatch(word)) or (token.endswith("|all") and word == "all")
        elif _LITERAL.fullmatch(token) and token not in _PLACEHOLDERS:
            fits = word in token.split("|")
        else:
            continue  # a placeholder that takes any word: NAME, GAME, move, N
        if not fits:
            return places or None
    return places
