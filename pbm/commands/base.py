"""Command classes and what a command is run with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from pbm.errors import NotFoundError, UsageError
from pbm.games import Game as Rules
from pbm.services.accounts.users import authenticate
from pbm.services.context import Context
from pbm.services.play.boards import Board, board_by_id, load_board
from pbm.store.models import User
from pbm.texts import phrase


def usage_forms(usage: str) -> list[str]:
    """The forms of a usage written `form | form` (a `|` inside brackets stays)."""
    forms: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(usage):
        if char in "[(":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif usage.startswith(" | ", i) and depth == 0:
            forms.append(usage[start:i].strip())
            start = i + 3
    forms.append(usage[start:].strip())
    return [f for f in forms if f] or [""]


@dataclass
class Invocation:
    """One command line, split into words, with its comment and any reply-token context."""

    line: str
    verb: str
    words: list[str]
    comment: str = ""
    rules: Rules | None = None
    # The options a variant name stands for when the game word was one (`quadrupel-added`).
    variant: dict[str, str] = field(default_factory=dict)
    # Set when the line came from a reply carrying a valid token from the player's address:
    # the board and the player are known, so no board number and no password are written.
    token_board_id: int | None = None
    token_user: User | None = None
    # The board's move count when the answered board mail was sent (None: not known): a
    # move answering an older mail than the board's newest is refused as stale.
    token_move: int | None = None
    params: dict[str, str] = field(default_factory=dict)  # -name[=value] words
    server_options: dict[str, str] = field(default_factory=dict)  # --name=value words

    def __post_init__(self) -> None:
        # A NUL is no character of a mail's text (RFC 5322 forbids it) and PostgreSQL
        # cannot store one: a comment, chat or message holding one failed the whole mail.
        # The command's own words keep theirs, so an address holding one is refused.
        self.comment = self.comment.replace("\x00", "")

    @property
    def by_token(self) -> bool:
        return self.token_user is not None


class Command:
    """One verb. Subclasses set the class attributes and implement `run`."""

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    usage: ClassVar[str]  # the arguments after the verb
    summary: ClassVar[str]
    scope: ClassVar[str] = "game"  # "game": written after a game name; "account": alone
    changes_state: ClassVar[bool] = True
    # Whether a token reply may say just `VERB ...` about its board.
    token_verb: ClassVar[bool] = False
    # Whether each word is a request of its own (help topics, boards to show): each
    # distinct word then counts as one command against `max_commands`.
    per_word: ClassVar[bool] = False
    # Whether the verb stands for a one-word move (`swap`, `pass`): `help GAME` lists it
    # only for the games whose `move_words` hold it.
    move_word: ClassVar[bool] = False

    def usage_forms(self, rules: Rules | None = None) -> list[str]:
        """Each form of the usage as a whole command line (`quarto subscribe ...`)."""
        prefix = (rules.name if rules else "GAME") + " " if self.scope == "game" else ""
        return [f"{prefix}{self.name} {form}".rstrip() for form in usage_forms(self.usage)]

    def full_usage(self, rules: Rules | None = None) -> str:
        """The usage an error mail shows: its forms one per line, each a whole command."""
        return "\n".join(self.usage_forms(rules))

    def run(self, ctx: Context, inv: Invocation) -> None:
        raise NotImplementedError

    # -- helpers for the common argument shapes -------------------------------------
    def need(self, inv: Invocation, count: int) -> None:
        """Refuse, with the usage, a command of fewer than `count` words."""
        if len(inv.words) < count:
            raise UsageError(phrase("missing_arguments"), self.full_usage(inv.rules))

    def rules_of(self, inv: Invocation) -> Rules:
        assert inv.rules is not None
        return inv.rules

    def named_board(self, ctx: Context, rules: Rules, board_text: str) -> Board:
        """The board a command names by its number."""
        try:
            return load_board(ctx, rules, board_text)
        except NotFoundError as exc:
            # A player who mistyped his board learns how to find its number.
            raise NotFoundError(
                f"{exc}\n{phrase('unknown_board_lists', name=rules.name)}"
            ) from None

    def board_user(self, ctx: Context, inv: Invocation) -> tuple[Board, User, list[str]]:
        """`board userid password rest...`, or, in a token reply, just `rest...`."""
        if inv.by_token:
            assert inv.token_board_id is not None and inv.token_user is not None
            return board_by_id(ctx, inv.token_board_id), inv.token_user, list(inv.words)
        self.need(inv, 3)
        board_text, userid, password, *rest = inv.words
        board = self.named_board(ctx, self.rules_of(inv), board_text)
        user = authenticate(ctx, userid, password, [u for _, u in board.players])
        return board, user, rest

    def user_only(self, ctx: Context, inv: Invocation) -> tuple[User, list[str]]:
        """`userid password rest...`, or the token's player."""
        if inv.by_token:
            assert inv.token_user is not None
            return inv.token_user, list(inv.words)
        self.need(inv, 2)
        userid, password, *rest = inv.words
        return authenticate(ctx, userid, password), rest
