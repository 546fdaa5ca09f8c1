"""Every command by verb, and the parser that turns one command line into an Invocation.

This module imports no command, and importing a command module registers nothing: the
composition root (pbm.app) calls `register` for every group of commands, in the order
help lists them. Help reads the registry when asked (pbm.commands.helptext).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from pbm.commands.base import Command, Invocation
from pbm.errors import NotFoundError, UnknownCommandError, UsageError
from pbm.games import GAMES, GameError, find_game
from pbm.games import Game as Rules
from pbm.services.play.challenges import SERVER_OPTIONS
from pbm.services.play.moves import EVENT_WORDS_NEAR
from pbm.store.models import User
from pbm.texts import echoed, phrase

# Commands written alone ("signup ...") and after a game name ("quarto move ..."), in
# the order they registered, and indexed by name and alias.
ACCOUNT_COMMANDS: list[Command] = []
GAME_COMMANDS: list[Command] = []
ACCOUNT_VERBS: dict[str, Command] = {}
GAME_VERBS: dict[str, Command] = {}
# The help groups (the phrase naming each) and their commands, in registration order.
HELP_GROUPS: dict[str, list[Command]] = {}
MULTIPLE = ("multiple", "mult")
# Words players write for a game command that spells them differently (`quarto decline
# 101 ...`): suggested with the misspellings, never run in its place; a verb is one word.
VERBS_MEANT = {word: event for word, event in EVENT_WORDS_NEAR.items() if " " not in word}


def register(group: str, *commands: Command) -> None:
    """Make commands known by their name and aliases (in their scope: account or game),
    listed by `help commands` under `group` (the phrase naming it)."""
    HELP_GROUPS.setdefault(group, [])
    for command in commands:
        account = command.scope == "account"
        listing = ACCOUNT_COMMANDS if account else GAME_COMMANDS
        verbs = ACCOUNT_VERBS if account else GAME_VERBS
        if command in listing:
            continue
        words = (command.name, *command.aliases)
        taken = [w for w in words if w in verbs]
        if taken:
            raise ValueError(f"two {command.scope} commands are called {taken[0]!r}")
        verbs.update(dict.fromkeys(words, command))
        listing.append(command)
        HELP_GROUPS[group].append(command)


def game_named(word: str) -> Rules | None:
    """The game a word names: its name, an alias or a variant name (`quadrupel-added`)."""
    found = game_and_variant(word)
    return found[0] if found else None


def game_and_variant(word: str) -> tuple[Rules, dict[str, str]] | None:
    """The game a word names and the options a variant name stands for ({} for a name)."""
    try:
        rules, options = find_game(word)
    except GameError:
        return None
    return rules, {str(k): str(v) for k, v in options.items()}


def starts_command(line: str) -> bool:
    """Whether a line begins like a command (an account verb, `multiple` or a game name)."""
    words = line.split()
    if not words:
        return False
    first = words[0].lower()
    return first in ACCOUNT_VERBS or first in MULTIPLE or game_named(first) is not None


def near_command(line: str) -> bool:
    """Whether a line's first word is a misspelt verb or game name (answer with suggestions)."""
    words = line.split()
    if not words:
        return False
    known = [*ACCOUNT_VERBS, *MULTIPLE, *game_names()]
    return bool(difflib.get_close_matches(words[0].lower(), known, n=1, cutoff=0.75))


def _closest(word: str, names: dict[str, str]) -> list[str]:
    """The (at most three) distinct names nearest to `word`: `names` maps each word a
    player may write (an alias, an abbreviation) to the name it stands for, so
    `chal` and `chall` suggest `challenge` once."""
    found: list[str] = []
    for near in difflib.get_close_matches(word.lower(), list(names), n=8, cutoff=0.6):
        if names[near] not in found:
            found.append(names[near])
    return found[:3]


def _verb_names(verbs: dict[str, Command]) -> dict[str, str]:
    return {verb: command.name for verb, command in verbs.items()}


def game_names() -> list[str]:
    names: list[str] = []
    for rules in GAMES.values():
        names += [rules.name, *(a.lower() for a in rules.aliases)]
        names += [a.lower() for a in rules.variant_aliases]
    return names


def game_name_map() -> dict[str, str]:
    """Game words to what they name: an alias to its game, a variant name to itself."""
    names: dict[str, str] = {}
    for rules in GAMES.values():
        for word in (rules.name, *rules.aliases):
            names[word.lower()] = rules.name
        names.update({a.lower(): a.lower() for a in rules.variant_aliases})
    return names


def game_verb_without_game(line: str) -> bool:
    """Whether a line reads `WORD VERB ...` with a game verb second and an unknown game
    first (`chess challenge alice bob`): a command for a game not played here, to be
    answered with the games that are. The words after the verb must fit the verb's
    usage (as many as it needs, a board number where it starts with one), so that a
    Subject such as "my move" or "Your move summary" is no command."""
    words = line.split()
    if len(words) < 2 or not _GAME_WORD.fullmatch(words[0]):
        return False
    first, verb = words[0].lower(), words[1].lower()
    if first in ACCOUNT_VERBS or first in MULTIPLE or game_named(first) is not None:
        return False
    command = GAME_VERBS.get(verb)
    return command is not None and _fits_usage(command, words[2:])


def game_verb_first(line: str) -> bool:
    """Whether a line reads `VERB ...` with a game verb first and its words after it
    fitting the verb's usage (`move 101 alice pw e3-e4`, `show 101`): a command that
    left out its game, to be answered with the game names rather than not at all."""
    words = line.split()
    if not words or words[0].lower() in ACCOUNT_VERBS:
        return False
    command = GAME_VERBS.get(words[0].lower())
    return command is not None and _fits_usage(command, words[1:])


def board_verb_by_token(line: str) -> bool:
    """Whether a reply's first line is a board command by its token that the account
    command of the same name cannot be: `confirm` alone plays the submitted move, as
    the account's `confirm` needs a token."""
    words = line.split()
    verb = words[0].lower() if words else ""
    command, account = GAME_VERBS.get(verb), ACCOUNT_VERBS.get(verb)
    if command is None or account is None or not command.token_verb:
        return False
    return not _fits_usage(account, words[1:])


def _fits_usage(command: Command, rest: Sequence[str]) -> bool:
    """Whether `rest` has the words the first form of a usage needs (a board number where
    it starts with one), so that a Subject such as "my move" is no command."""
    # The first form of the usage, up to `|`: its required words (not in brackets).
    needed = [t for t in command.usage.split(" | ")[0].split() if not t.startswith(("[", "("))]
    if len(rest) < len(needed):
        return False
    return not needed or not needed[0].startswith("board") or bool(BOARD_WORD.fullmatch(rest[0]))


# What a player may mean as a game name: letters, digits, '-' and '_'.
_GAME_WORD = re.compile(r"[^\W_][\w-]*")
# A board as players write it: 101, a tournament's a101, with a move number 101#7.
BOARD_WORD = re.compile(r"[^\W\d_]{0,3}\d+(?:#\d+)?")


def unknown_game(word: str) -> NotFoundError:
    """The answer to a game word that names no game: the games played here, the closest."""
    close = _closest(word, game_name_map())
    games = ", ".join(rules.name for rules in GAMES.values())
    near = phrase("unknown_game_close", names=", ".join(close)) if close else ""
    return NotFoundError(phrase("unknown_game", game=echoed(word), games=games, close=near))


def parse_line(line: str, comment: str = "") -> tuple[Command, Invocation]:
    """The command a line names and its invocation; unknown words raise with suggestions."""
    words = [w for w in line.split() if w != "**"]
    if not words:
        raise UsageError(phrase("empty_command"), "help")
    first = words[0].lower()
    if first in ACCOUNT_VERBS:
        command = ACCOUNT_VERBS[first]
        return command, Invocation(line=line, verb=first, words=words[1:], comment=comment)
    found = game_and_variant(first)
    if found is None:
        # `move 101 ...` without the game: say which game names exist.
        if first in GAME_VERBS:
            raise NotFoundError(phrase("game_missing", verb=first, games=", ".join(sorted(GAMES))))
        # `chess challenge ...`: a game verb after a game not played here.
        if game_verb_without_game(" ".join(words)):
            raise unknown_game(words[0])
        suggestions = _closest(first, {**_verb_names(ACCOUNT_VERBS), **game_name_map()})
        raise UnknownCommandError(echoed(words[0]), suggestions)
    rules, variant = found
    if len(words) < 2:
        raise UsageError(phrase("verb_missing", game=rules.title), f"{rules.name} help")
    verb = words[1].lower()
    if verb not in GAME_VERBS:
        near = _closest(verb, {**_verb_names(GAME_VERBS), **VERBS_MEANT})
        suggestions = [f"{rules.name} {v}" for v in near]
        raise UnknownCommandError(f"{rules.name} {echoed(words[1])}", suggestions)
    command = GAME_VERBS[verb]
    inv = Invocation(
        line=line, verb=verb, words=words[2:], comment=comment, rules=rules, variant=variant
    )
    if command.name == "challenge":
        _split_options(inv)
    return command, inv


def token_invocation(
    line: str, comment: str, rules: Rules, board_id: int, user: User, move: int | None = None
) -> tuple[Command, Invocation]:
    """A reply's first line about its board: `e3-e4`, `move e3-e4`, `resign`, `show`...;
    `move` is the board's move count when the answered mail was sent."""
    words = [w for w in line.split() if w != "**"]
    first = words[0].lower() if words else ""
    command = GAME_VERBS.get(first)
    if command is not None and command.token_verb:
        words = words[1:]
        verb = first
    else:
        command = GAME_VERBS["move"]
        verb = "move"
    inv = Invocation(
        line=line,
        verb=verb,
        words=words,
        comment=comment,
        rules=rules,
        token_board_id=board_id,
        token_user=user,
        token_move=move,
    )
    return command, inv


def _split_options(inv: Invocation) -> None:
    """pbmserv: `-name[=value]` words are game options, `--name=value` server options."""
    rest: list[str] = []
    for word in inv.words:
        name, equals, value = word.lstrip("-").partition("=")
        if word.startswith("--") and len(word) > 2:
            inv.server_options[name.lower()] = value or "1"
        elif word.startswith("-") and len(word) > 1:
            inv.params[name.lower()] = value or "yes"
        elif equals and name:
            # `size=10` without the dash: no userid holds '=', so it is an option too
            # (a server option when it names one, such as nagtime=5).
            target = inv.server_options if name.lower() in SERVER_OPTIONS else inv.params
            target[name.lower()] = value
        else:
            rest.append(word)
    inv.words = rest
