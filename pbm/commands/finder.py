"""Finding the commands in a message, as pbmserv players write them.

- The Subject is the command; the body is its comment (shown to the other players).
- Subject `multiple`: each unindented body line is a command; indented lines under it
  are that command's comment.
- A subject that is no command, with a body whose first line is one: that line.
- A subject whose first word is a misspelt command: answered with suggestions.
- A reply carrying a valid token is handled by the pipeline first (its first line).
"""

from __future__ import annotations

from dataclasses import dataclass

from pbm.commands.registry import MULTIPLE, near_command, starts_command


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


def find_commands(command_subject: str, fresh_text: str) -> list[CommandLine]:
    subject = command_subject.strip()
    words = subject.split()
    if words and words[0].lower() in MULTIPLE:
        return multiple_lines(fresh_text)
    if subject and starts_command(subject):
        return [CommandLine(subject, fresh_text.strip("\n"))]
    first, rest = first_line_and_rest(fresh_text)
    if first and starts_command(first):
        words = first.split()
        if words[0].lower() in MULTIPLE:
            return multiple_lines(rest)
        return [CommandLine(first, rest)]
    if subject and near_command(subject):
        return [CommandLine(subject, fresh_text.strip("\n"))]
    return []
