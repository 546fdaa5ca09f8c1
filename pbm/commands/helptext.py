"""Help generated from the command definitions and the games' own help."""

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
    game_named,
)
from pbm.config import Config
from pbm.games import GAMES
from pbm.games import Game as Rules
from pbm.texts import phrase, render


def _entries(commands: Sequence[Command], rules: Rules | None = None) -> str:
    lines = []
    for command in commands:
        lines.append("  " + command.full_usage(rules))
        lines += textwrap.wrap(
            command.summary, width=72, initial_indent="      ", subsequent_indent="      "
        )
    return "\n".join(lines)


def general_help(config: Config) -> str:
    games = "\n".join(
        f"  {r.name:<12} {r.title}" + (f" (also {', '.join(r.aliases)})" if r.aliases else "")
        for r in GAMES.values()
    )
    return render(
        "help",
        server=config.server_address,
        account_commands=_entries(ACCOUNT_COMMANDS),
        game_commands=_entries(GAME_COMMANDS),
        games=games or "  (none)",
    )


def game_help(rules: Rules) -> str:
    return render(
        "help_game",
        rules=rules.help_text().rstrip(),
        game_commands=_entries(GAME_COMMANDS, rules),
    )


def topic_help(topic: str) -> str:
    word = topic.lower()
    rules = game_named(word)
    if rules is not None:
        return game_help(rules)
    command = ACCOUNT_VERBS.get(word) or GAME_VERBS.get(word)
    if command is not None:
        return f"{command.full_usage()}\n\n{textwrap.fill(command.summary, width=72)}\n"
    close = difflib.get_close_matches(word, [*ACCOUNT_VERBS, *GAME_VERBS, *GAMES], n=3)
    return phrase("help_unknown", topic=topic, close=", ".join(close) or "-")
