"""Finding the commands in a message, as pbmserv players write them.

- The Subject is the command; the body is its comment (shown to the other players).
- Subject `multiple`: each unindented body line is a command; indented lines under it
  are that command's comment.
- A subject that is no command, with a body whose first line is one: that line.
- A subject whose first word is a misspelt command: answered with suggestions; one that
  names a game not played here (`chess challenge alice bob`), or none (`move 101 ...`):
  answered with the games.
- A subject pbm wrote itself (`Re: Quad Board 101 carol`, `Quad chat 101 carol`) is no
  command, though its words start like one: the reply's body is looked at instead.
- A reply carrying a valid token is handled by the pipeline first (its first line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from pbm.commands.registry import (
    MULTIPLE,
    game_verb_first,
    game_verb_without_game,
    near_command,
    starts_command,
)
from pbm.games import GAMES


@dataclass(frozen=True)
class CommandLine:
    text: str
    comment: str = ""


def first_line_and_rest(text: str) -> tuple[str, str]:
    lines = text.strip("\n").split("\n")
    for i, line in enumerate(lines):
        if line.strip():
            return line.strip(), "\n".join(lines[i + 1 :]).strip("\n")
    return "", ""


def multiple_lines(body: str) -> list[CommandLine]:
    found: list[tuple[str, list[str]]] = []
    for line in body.split("\n"):
        if not line.strip():
            if found:
                found[-1][1].append("")
            continue
        if line[0].isspace():
            if found:
                found[-1][1].append(line.strip())
            continue
        found.append((line.strip(), []))
    return [CommandLine(text, "\n".join(comment).strip("\n")) for text, comment in found]


@cache
def _own_subjects() -> re.Pattern[str]:
    """The subjects of pbm's board mails (pbm.services.play.board_text.subject_for, the phrases
    subject_board_error, subject_removed, subject_chat), with any name of their game.
    As commands they would be a `board` (= move) or `chat` without the password."""
    names = sorted(
        {re.escape(w.lower()) for r in GAMES.values() for w in (r.name, r.title, *r.aliases)}
    )
    game = "(?:" + "|".join(names) + ")"
    return re.compile(
        rf"(?:new\s+)?{game}\s+board\s+\S+(?:\s+\S+)?(?:\s+\*\*)?"
        rf"|{game}\s+board\s+\S+\s+has\s+been\s+removed"
        rf"|{game}\s+chat\s+\S+\s+\S+(?:\s+\*\*)?",
        re.IGNORECASE,
    )


def own_subject(subject: str) -> bool:
    """Whether a subject is one pbm wrote on a board mail (its reply prefixes removed)."""
    return _own_subjects().fullmatch(subject.strip()) is not None


def find_commands(command_subject: str, fresh_text: str) -> list[CommandLine]:
    return scan(command_subject, fresh_text).lines


def marked_multiple(command_subject: str, fresh_text: str) -> bool:
    """Whether a mail says `multiple` where pbm reads it, so that a body with no command
    lines under it is answered as such rather than as a mail with no command."""
    return scan(command_subject, fresh_text).multiple


@dataclass(frozen=True)
class Scan:
    lines: list[CommandLine]
    multiple: bool = False  # the lines are those under a `multiple` marker


def scan(command_subject: str, fresh_text: str) -> Scan:
    subject = command_subject.strip()
    words = subject.split()
    if words and words[0].lower() in MULTIPLE:
        return Scan(multiple_lines(fresh_text), multiple=True)
    if own_subject(subject):
        subject = ""
    if subject and starts_command(subject):
        return Scan([CommandLine(subject, fresh_text.strip("\n"))])
    first, rest = first_line_and_rest(fresh_text)
    if first and starts_command(first):
        words = first.split()
        if words[0].lower() in MULTIPLE:
            return Scan(multiple_lines(rest), multiple=True)
        return Scan([CommandLine(first, rest)])
    if subject and (
        near_command(subject) or game_verb_without_game(subject) or game_verb_first(subject)
    ):
        return Scan([CommandLine(subject, fresh_text.strip("\n"))])
    return Scan([])
