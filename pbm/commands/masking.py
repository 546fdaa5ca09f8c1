"""Passwords out of the commands pbm echoes back: the "(Your command: ...)" of an error
mail, the list of commands not run, the quoted original and the log show a command
with each password written `******`.

Which words are passwords comes from the command's usage (pbm.commands.registry): the
words in the password places (`password`, `current-password`, `new-password` after a
`userid`) of the first usage form the words fit. A line whose verb is misspelt is
read as the nearest command, since it still carries the password.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from pbm.commands.base import Command
from pbm.commands.helptext import usage_forms
from pbm.commands.registry import (
    ACCOUNT_VERBS,
    BOARD_WORD,
    GAME_VERBS,
    game_named,
    game_verb_without_game,
    near_command,
    starts_command,
)
from pbm.mail.headers import strip_subject_prefixes

MASK = "******"

_WORD = re.compile(r"\S+")
# A fixed word of a usage (`create`, `join|leave|start`), unlike the placeholders.
_LITERAL = re.compile(r"[a-z]+(?:\|[a-z0-9]+)*")
_PLACEHOLDERS = {"board", "userid", "move", "n", "name", "game", "address", "round"}


def mask_line(line: str) -> str:
    """`line` with the passwords of the command it holds written `******`."""
    spans = [m for m in _WORD.finditer(line) if m.group() != "**"]
    found = _command_of([m.group() for m in spans])
    if found is None:
        return line
    command, start = found
    places = password_places(command, [m.group() for m in spans[start:]])
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


def _command_of(words: Sequence[str]) -> tuple[Command, int] | None:
    """The command a line's words name and where its arguments begin."""
    if not words:
        return None
    first = words[0].lower()
    if first in ACCOUNT_VERBS:
        return ACCOUNT_VERBS[first], 1
    if first in GAME_VERBS:  # the game name left out
        return GAME_VERBS[first], 1
    second = words[1].lower() if len(words) > 1 else ""
    if second in GAME_VERBS:
        return GAME_VERBS[second], 2
    if second and game_named(first) is not None:
        near = difflib.get_close_matches(second, list(GAME_VERBS), n=1, cutoff=0.6)
        return (GAME_VERBS[near[0]], 2) if near else None
    near = difflib.get_close_matches(first, list(ACCOUNT_VERBS), n=1, cutoff=0.6)
    return (ACCOUNT_VERBS[near[0]], 1) if near else None


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
            fits = any(c.isalpha() for c in word) and not BOARD_WORD.fullmatch(word)
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
