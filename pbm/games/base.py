"""The game protocol: the contract every rules module meets.

A game object is stateless; states and moves are immutable values. The server, the
CLI and the tests meet every game only through the methods of `Game`. Rules modules
import nothing from pbm outside `pbm.games`.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeAlias, TypeVar

# Each rules module declares its own state and move types (`Quarto(Game[QuartoState,
# QuartoMove])`). A state is an immutable value with equality; a move is a small
# immutable, hashable value (an int or a tuple of ints). Text exists only in
# format_move and parse_move.
StateT = TypeVar("StateT")
MoveT = TypeVar("MoveT", bound=Hashable)

# What code that handles any game holds: the type depends on the game it was given.
State: TypeAlias = Any
Move: TypeAlias = Any


class GameError(ValueError):
    """Base of every error a rules module raises for people: str(e) is the sentence."""


class OptionError(GameError):
    """A variant option that does not exist or has a bad value."""


class PositionError(GameError):
    """A position text that `load` cannot read."""


class UnknownGameError(GameError, KeyError):
    """A game name that is not registered; the message lists the games."""

    def __str__(self) -> str:  # KeyError would quote the message otherwise
        return str(self.args[0]) if self.args else ""


class MoveError(GameError):
    """A move text that cannot be played; the message quotes the input."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        super().__init__(self.message())

    def message(self) -> str:
        return f"'{self.text}': {self.reason}"


class InvalidMoveError(MoveError):
    """The text is not a move in this game's notation."""

    def message(self) -> str:
        return f"'{self.text}' is not a move: {self.reason}"


class IllegalMoveError(MoveError):
    """The text names a move that the rules forbid in this position."""

    def message(self) -> str:
        return f"'{self.text}' is illegal here: {self.reason}"


class AmbiguousMoveError(MoveError):
    """The text fits more than one legal move; `candidates` holds their notation."""

    def __init__(self, text: str, candidates: Sequence[str]) -> None:
        self.candidates = tuple(candidates)
        super().__init__(text, "it could mean " + " or ".join(self.candidates))

    def message(self) -> str:
        return f"'{self.text}' is ambiguous: {self.reason}"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended. `winner` is a seat index, or None for a draw."""

    winner: int | None
    reason: str
    scores: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class Status:
    """Where a game stands, as values: how it ended (or None), the seat to move (None
    when nobody is, or once it ended) and the headline, the lines `render` draws
    under the board to say so. Code reads these fields, never `render`'s words."""

    outcome: Outcome | None
    to_move: int | None
    headline: tuple[str, ...]


def _parse_bool(text: str) -> bool:
    low = text.strip().lower()
    if low in ("1", "yes", "y", "true", "on"):
        return True
    if low in ("0", "no", "n", "false", "off"):
        return False
    raise ValueError("expected yes or no")


@dataclass(frozen=True)
class Option:
    """One variant option of a game, as players write it in a challenge.

    `kind` is "int", "bool" or "choice"; `choices` lists allowed values (ints for an
    int option with a fixed set, strings for a choice); `minimum`/`maximum` bound ints.
    `parse` may replace the default text conversion for options with their own syntax
    (for example a set of Quarto attributes); it must raise ValueError on bad text.
    """

    name: str
    kind: str
    default: Any
    help: str
    choices: tuple[Any, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    parse: Callable[[str], Any] | None = field(default=None, compare=False)

    def coerce(self, value: Any) -> Any:
        """Return the option's value from a typed value or the text a player wrote."""
        try:
            if isinstance(value, str):
                if self.parse is not None:
                    value = self.parse(value)
                elif self.kind == "int":
                    value = int(value.strip())
                elif self.kind == "bool":
                    value = _parse_bool(value)
                elif self.kind == "choice":
                    value = value.strip().lower()
            elif self.kind == "bool" and not isinstance(value, bool):
                raise ValueError("expected yes or no")
            elif self.kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError("expected a whole number")
        except ValueError as exc:
            raise OptionError(f"option {self.name}: {value!r} is not valid ({exc})") from None
        if self.choices and value not in self.choices:
            allowed = ", ".join(str(c) for c in self.choices)
            raise OptionError(f"option {self.name}: {value!r} is not one of {allowed}")
        if self.minimum is not None and value < self.minimum:
            raise OptionError(f"option {self.name}: {value} is below the minimum {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise OptionError(f"option {self.name}: {value} is above the maximum {self.maximum}")
        return value

    def describe(self) -> str:
        if self.choices:
            values = "|".join(str(c) for c in self.choices)
        elif self.kind == "int" and self.minimum is not None and self.maximum is not None:
            values = f"{self.minimum}..{self.maximum}"
        elif self.kind == "bool":
            values = "yes|no"
        else:
            values = self.kind
        default = ("yes" if self.default else "no") if self.kind == "bool" else self.default
        return f"{self.name}={values} (default {default}): {self.help}"


class Game(Generic[StateT, MoveT]):
    """Base class of every rules module's game object (stateless).

    Subclasses name their state and move types (`class Quarto(Game[QuartoState,
    QuartoMove])`), set the class attributes and implement the methods that raise
    NotImplementedError. Seats are indexed from 0; seat 0 moves first in the start
    position, and the player named first in a challenge takes seat 0.
    """

    name: ClassVar[str] = ""  # canonical lower-case identifier, e.g. "quarto"
    title: ClassVar[str] = ""  # display name, e.g. "Quarto"
    aliases: ClassVar[tuple[str, ...]] = ()
    seats: ClassVar[tuple[str, ...]] = ()  # seat names, e.g. ("Black", "White")
    options: ClassVar[tuple[Option, ...]] = ()
    # The rules for `help GAME`: paragraphs and small diagrams, lines of at most 72
    # columns (mail programs show plain text that wide).
    summary: ClassVar[str] = ""
    notation: ClassVar[str] = ""  # how moves are written, for `help GAME`, 72 columns
    # Option sets the conformance suite, the golden files and the benchmarks cover.
    example_options: ClassVar[tuple[Mapping[str, Any], ...]] = ({},)
    # Names under which a variant can be challenged, with the options they stand for
    # (`quadrupel-added` -> {"variant": "added"}); `pbm.games.find_game` resolves them.
    variant_aliases: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    # The one-word moves the game knows ("pass", "swap"): `help GAME` lists the verbs
    # of those words only.
    move_words: ClassVar[frozenset[str]] = frozenset()

    # -- options --------------------------------------------------------------
    def resolve_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Validate options (typed values or player text) and fill in defaults."""
        known = {o.name: o for o in self.options}
        resolved: dict[str, Any] = {}
        for raw_name, value in options.items():
            name = raw_name.strip().lower().replace("-", "_")
            if name not in known:
                names = ", ".join(sorted(known)) or "none"
                raise OptionError(f"{self.title} has no option '{raw_name}' (options: {names})")
            resolved[name] = known[name].coerce(value)
        for opt in self.options:
            resolved.setdefault(opt.name, opt.default)
        return resolved

    # -- the protocol -----------------------------------------------------------
    def new_state(self, **options: Any) -> StateT:
        raise NotImplementedError

    def to_move(self, state: StateT) -> int | None:
        raise NotImplementedError

    def legal_moves(self, state: StateT) -> list[MoveT]:
        raise NotImplementedError

    def format_move(self, state: StateT, move: MoveT) -> str:
        raise NotImplementedError

    def parse_move(self, state: StateT, text: str) -> MoveT:
        raise NotImplementedError

    def answer_example(self, state: StateT) -> str:
        """A move as a player writes it in positions of `state`'s kind (a give or a
        placement, a setup or a move), for the line of a board mail that says how to
        answer: the notation, not advice (legal in `state` where the game can tell, so
        that a player who copies it is not refused; always readable)."""
        raise NotImplementedError

    def legal_example(
        self, state: StateT, preferred: Sequence[str], fallback: str, skip: Sequence[str] = ()
    ) -> str:
        """The first of `preferred` that is a legal move in `state`, else the first legal
        move not in `skip` (a choice such as the pie swap is no example), else
        `fallback`: an `answer_example` the reader may send as written."""
        texts = [self.format_move(state, m) for m in self.legal_moves(state)]
        texts = [t for t in texts if t not in skip]
        return next((t for t in preferred if t in texts), texts[0] if texts else fallback)

    def apply(self, state: StateT, move: MoveT) -> StateT:
        raise NotImplementedError

    def outcome(self, state: StateT) -> Outcome | None:
        raise NotImplementedError

    def headline(self, state: StateT) -> list[str]:
        """The status lines `render` draws (without their indent): whose turn and what
        to do, or how the game ended."""
        raise NotImplementedError

    def render(self, state: StateT, seat: int | None = None, *, headline: bool = True) -> str:
        """The board as text for `seat` (None: an observer). `headline=False` leaves
        out the lines of `headline` (a finished board's mail says the result once)."""
        raise NotImplementedError

    def status(self, state: StateT) -> Status:
        """The outcome, the seat to move and the headline of `state`."""
        return Status(self.outcome(state), self.to_move(state), tuple(self.headline(state)))

    def dump(self, state: StateT) -> str:
        raise NotImplementedError

    def load(self, text: str) -> StateT:
        raise NotImplementedError

    # -- optional refinements with sensible defaults ----------------------------
    def describe_move(self, state: StateT, move: MoveT) -> str:
        """The echo of a move with its side effects (captures, conversions)."""
        return self.format_move(state, move)

    def state_options(self, state: StateT) -> dict[str, Any]:
        """The resolved options a state was created with."""
        return dict(state.options) if hasattr(state, "options") else {}

    def player_seats(self, state: StateT) -> tuple[int, ...]:
        """Seat of each player by challenge order; only a pie swap changes it."""
        return tuple(range(len(self.seats)))

    def seat_name(self, seat: int) -> str:
        return self.seats[seat]

    def move_visible(self, now: StateT, move: MoveT, mover: int, viewer: int | None) -> bool:
        """Whether `viewer` (a seat, or None for observers) may see the text of `move`,
        played by seat `mover`, in the game as it stands at `now` (hidden setups)."""
        return True

    def help_text(self) -> str:
        """The rules page of `help GAME` and `pbm rules help`: the rules with their
        diagrams, the notation, the options and the variant names, in 72 columns."""
        parts = [self.title, "", self.summary.strip("\n").rstrip()]
        parts += ["", "Notation:", self.notation.strip("\n").rstrip()]
        if self.options:
            first = self.options[0]
            example = f"-{first.name}={_example_value(first)}"
            parts += ["", "Options (write -name=value in a challenge, e.g."]
            parts += [f'"{self.name} challenge {example} alice bob"):']
            for option in self.options:
                parts += _fill(option.describe(), "  ", "      ")
        if self.variant_aliases:
            # The second name: the first is often the plain game under another name.
            name = list(self.variant_aliases)[min(1, len(self.variant_aliases) - 1)]
            parts += ["", "Variant names: challenge one like a game, e.g."]
            parts += [f'"{name} challenge alice bob". Each stands for options:']
            width = max(len(alias) for alias in self.variant_aliases)
            for alias, options in self.variant_aliases.items():
                settings = " ".join(f"-{k}={v}" for k, v in options.items())
                parts += _fill(f"{alias:<{width}}  {settings}", "  ", " " * (width + 4))
        return "\n".join(parts).rstrip() + "\n"


def _example_value(option: Option) -> str:
    """A value of `option` other than its default, to show how options are written."""
    if option.kind == "bool":
        return "no" if option.default else "yes"
    if option.choices:
        return str(next((c for c in reversed(option.choices) if c != option.default), ""))
    if option.maximum is not None and option.maximum != option.default:
        return str(option.maximum)
    return str(option.default)


def _fill(text: str, first: str, rest: str) -> list[str]:
    """`text` folded at 72 columns, never inside a word (a long value stays whole)."""
    return textwrap.wrap(
        text,
        width=72,
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    )


# -- helpers shared by the rules modules ------------------------------------------

_SEPARATORS = re.compile(r"[\s\-:]+")


def squash(text: str) -> str:
    """Lower-case the text and drop spaces, '-' and ':' separators."""
    return _SEPARATORS.sub("", text.strip().lower())


def parse_option_pairs(pairs: Iterable[str]) -> dict[str, str]:
    """Read `name=value` words (as typed after --option or in a challenge)."""
    result: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise OptionError(f"option '{pair}' must be written name=value")
        result[name.strip().lower()] = value.strip()
    return result
