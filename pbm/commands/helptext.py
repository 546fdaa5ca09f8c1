"""Help generated from the command definitions (pbm.commands.registry) and the games' own
help (`Game.help_text`): `help`, `help commands`, `help tutorial`, `help COMMAND` and
`help GAME`. `pbm help ...` prints the same texts. Every line fits in 72 columns."""

from __future__ import annotations

import difflib
import textwrap
from collections.abc import Sequence

from pbm.commands.base import Command
from pbm.commands.registry import (
    ACCOUNT_COMMANDS,
    ACCOUNT_VERBS,
    GAME_COMMANDS,
    GAME_VERBS,
    HELP_GROUPS,
    game_name_map,
    game_named,
)
from pbm.config import Config
from pbm.games import Game as Rules
from pbm.services.play import lists
from pbm.texts import WIDTH, echoed, phrase, render, wrap

# Topics that are neither a command nor a game (pbmserv's `help commands`, `help tutorial`).
TOPICS = ("commands", "tutorial")
# Words a player asks help about that are move words of `move`, not commands.
PROPOSAL_TOPICS = ("propose", "draw", "undo", "takeback")


def usage_lines(command: Command, rules: Rules | None = None, indent: str = "  ") -> list[str]:
    """Each form of a command's usage on its own line, folded under itself when long."""
    lines: list[str] = []
    for form in command.usage_forms(rules):
        text = _bracketed_spaces(form, _KEEP)
        folded = textwrap.wrap(
            text,
            width=WIDTH,
            initial_indent=indent,
            subsequent_indent=indent + "    ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        lines += [line.replace(_KEEP, " ") for line in folded]
    return lines


# Stands for a space inside brackets while a usage is folded: `[clear | show]` stays whole.
_KEEP = "\x00"


def _bracketed_spaces(text: str, mark: str) -> str:
    out, depth = [], 0
    for char in text:
        depth += char in "[("
        depth -= char in ")]"
        out.append(mark if char == " " and depth > 0 else char)
    return "".join(out)


def _entries(commands: Sequence[Command], rules: Rules | None = None) -> str:
    """Usage lines, each command's summary folded under them."""
    lines: list[str] = []
    for command in commands:
        lines += usage_lines(command, rules)
        lines += textwrap.wrap(
            command.summary, width=WIDTH, initial_indent="      ", subsequent_indent="      "
        )
    return "\n".join(lines)


def _usages(commands: Sequence[Command], rules: Rules | None = None) -> str:
    shown = [c for c in commands if rules is None or not c.move_word or c.name in rules.move_words]
    return "\n".join(line for command in shown for line in usage_lines(command, rules))


def _groups() -> list[tuple[str, list[Command]]]:
    """The commands by group, groups and commands in registration order."""
    return [(key, list(commands)) for key, commands in HELP_GROUPS.items()]


def general_help(config: Config) -> str:
    """`help`: how to write commands, every command's usage, the games."""
    return wrap(
        render(
            "help",
            server=config.server_address,
            account_commands=_usages(ACCOUNT_COMMANDS),
            game_commands=_usages(GAME_COMMANDS),
            games=textwrap.indent(lists.game_catalogue(), "  "),
        ),
        reflow=True,
    )


def commands_help(config: Config) -> str:
    """`help commands`: every command with its usage and what it does, by group."""
    sections = []
    for key, commands in _groups():
        title = phrase(key)
        sections.append(f"{title}\n{'-' * len(title)}\n{_entries(commands)}")
    return wrap(
        render("help_commands", server=config.server_address, groups="\n\n".join(sections)),
        reflow=True,
    )


def tutorial_help(config: Config) -> str:
    """`help tutorial`: a first game, step by step, with the mails it brings."""
    return wrap(render("help_tutorial", server=config.server_address), reflow=True)


def game_help(rules: Rules) -> str:
    """`help GAME`: the game's rules page, then its commands' usage."""
    return wrap(
        render(
            "help_game",
            rules=rules.help_text().rstrip(),
            game=rules.name,
            game_commands=_usages(GAME_COMMANDS, rules),
        )
    )


def topic_help(topic: str, config: Config) -> str:
    """`help TOPIC`: a topic, a game (or variant) name, or a command by name or alias."""
    word = topic.lower()
    if word == "commands":
        return commands_help(config)
    if word == "tutorial":
        return tutorial_help(config)
    rules = game_named(word)
    if rules is not None:
        return game_help(rules)
    if word in PROPOSAL_TOPICS:
        return wrap(phrase("help_proposals")) + "\n"  # ended as every other topic
    command = ACCOUNT_VERBS.get(word) or GAME_VERBS.get(word)
    if command is not None:
        lines = usage_lines(command, indent="")
        summary = textwrap.fill(command.summary, width=WIDTH)
        return "\n".join(lines) + f"\n\n{summary}\n"
    close = closest_topics(word)
    # Ended by a newline as every other topic, or `pbm help chess quarto` runs them together.
    if not close:
        return wrap(phrase("help_unknown", topic=echoed(topic))) + "\n"
    return wrap(phrase("help_unknown_close", topic=echoed(topic), close=", ".join(close))) + "\n"


def closest_topics(word: str) -> list[str]:
    """Help topics near a misspelt word: each command once (by its name, even when an
    alias is the nearer), the games and variant names, `commands` and `tutorial`."""
    names: dict[str, str] = {}
    for verbs in (ACCOUNT_VERBS, GAME_VERBS):
        for verb, command in verbs.items():
            names.setdefault(verb, command.name)
    for game_word, name in game_name_map().items():
        names.setdefault(game_word, name)
    for topic in (*TOPICS, *PROPOSAL_TOPICS):
        names.setdefault(topic, topic)
    found: list[str] = []
    for near in difflib.get_close_matches(word.lower(), list(names), n=6, cutoff=0.6):
        if names[near] not in found:
            found.append(names[near])
    return found[:3]
