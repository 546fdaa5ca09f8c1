"""Whole games played from the words format alone (issue 26): each player has set
`format words`, reads only the board mails it is sent, rebuilds the position from their
sentences with the parser below (the tests' own: pbm has no parser of its words), picks
a random legal move from that position by the game's rules as written here, and answers
the board mail with it. Every move must be accepted and the game must reach its end."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pytest

from pbm.games.grid import square_names
from tests.server.conftest import Sent, Server, board_row
from tests.server.test_words_mail import flat, reply

GROUP = re.compile(
    r"(Black|White|Pieces) (?:men|stones|counters|pieces|on the board)(?: \(\w\))?, "
    r"(\d+): (.*?)\."
)
STATUS = re.compile(r"(?:^| )(\w+) to (move|drop|set up|give|place)\b")
ORTHOGONAL = ((0, 1), (1, 0), (0, -1), (-1, 0))
DIAGONAL = ((1, 1), (1, -1), (-1, -1), (-1, 1))


@dataclass
class Position:
    """What a words board mail says: who does what, each side's pieces (square: the
    words after it), the sides' players, and the sentences about what is off the board."""

    mover: str
    doing: str  # move, drop, set up, give, place
    status: str
    pieces: dict[str, dict[str, str]] = field(default_factory=dict)
    sides: dict[str, str] = field(default_factory=dict)  # userid: side
    text: str = ""

    def side_of(self, userid: str) -> str:
        return self.sides[userid]

    def occupied(self) -> set[str]:
        return {square for group in self.pieces.values() for square in group}


def read_position(text: str) -> Position:
    """The position in a flattened words board mail (what follows the move list)."""
    words = text.partition("Moves: ")[2].partition(". ")[2] or text.partition("No moves yet. ")[2]
    status = STATUS.search(words)
    assert status is not None, text
    found = Position(status.group(1), status.group(2), words.partition(".")[0], text=text)
    for side, count, items in GROUP.findall(words):
        squares: dict[str, str] = {}
        for item in items.split("; ") if items != "none" else ():
            if item.startswith("row "):
                squares.update((s, "") for s in item.partition(": ")[2].split())
            else:
                square, _, detail = item.partition(" ")
                squares[square] = detail
        assert len(squares) == int(count), (side, items)
        found.pieces[side] = squares
    sides = re.search(r"Sides: (.*?)\.", words)
    if sides is not None:
        for pair in sides.group(1).split(", "):
            side, _, userid = pair.partition(": ")
            found.sides[userid] = side
    return found


def square(file: int, rank: int, size: int) -> str | None:
    """The square's name, or None off a `size` x `size` board."""
    if 0 <= file < size and 0 <= rank < size:
        return f"{chr(ord('a') + file)}{rank + 1}"
    return None


def coords(name: str) -> tuple[int, int]:
    return ord(name[0]) - ord("a"), int(name[1:]) - 1


# -- Quadrature: steps forward, diagonally forward or sideways, no suicide ---------------


def rectangles(point: str) -> list[list[str]]:
    """The other three corners of every axis-parallel rectangle with a corner on `point`
    (on Quadrature's 11x11 board), the corner across from `point` last."""
    f, r = coords(point)
    found = []
    for f2 in range(11):
        for r2 in range(11):
            if f2 != f and r2 != r:
                found.append(
                    [f"{chr(97 + f2)}{r + 1}", f"{chr(97 + f)}{r2 + 1}", f"{chr(97 + f2)}{r2 + 1}"]
                )
    return found


def squares(own: set[str], enemy: set[str], point: str) -> bool:
    """Whether a man of `own` on `point` squares a man of `enemy`: two more own corners
    and one enemy corner."""
    return any(
        sum(c in own for c in corners) == 2 and sum(c in enemy for c in corners) == 1
        for corners in rectangles(point)
    )


def suicide(enemy: set[str], point: str) -> bool:
    """Whether `point` is the fourth corner of three enemy men (no man may step there)."""
    return any(all(c in enemy for c in corners) for corners in rectangles(point))


def quadrature_moves(position: Position, rng: random.Random) -> str:
    side = position.side_of(position.mover)
    other = "White" if side == "Black" else "Black"
    own, enemy = set(position.pieces[side]), set(position.pieces[other])
    marker = re.search(rf"{side}: \d+ on the board, \d+ in reserve, marker (\d)", position.text)
    assert marker is not None, position.text
    ahead = 1 if side == "Black" else -1
    moves = []
    for man in own:
        f, r = coords(man)
        for df, dr in ((0, ahead), (-1, ahead), (1, ahead), (-1, 0), (1, 0)):
            to = square(f + df, r + dr, 11)
            if to is None or to in own or to in enemy:
                continue
            if suicide(enemy, to):
                continue
            after = (own - {man}) | {to}
            if dr == 0 and marker.group(1) == "2" and not squares(after, enemy, to):
                continue  # a third quiet sideways move
            moves.append(f"{man}-{to}")
    return rng.choice(sorted(moves)) if moves else "pass"


# -- Quadrupel: setups, then steps and single jumps, never back and forth a third time ---


def quadrupel_moves(position: Position, rng: random.Random) -> str:
    side = position.side_of(position.mover)
    mine = sorted(position.pieces[side])
    if position.doing == "set up":
        if "position game" in position.text:
            return "setup " + " ".join(f"{s}=1" for s in rng.sample(mine, 2))
        dots = rng.sample([1, 2, 3, 4], 4)
        return "setup " + " ".join(f"{s}={d}" for s, d in zip(mine, dots, strict=True))
    taken = position.occupied()
    moves = []
    for stone in mine:
        f, r = coords(stone)
        for df, dr in ORTHOGONAL + DIAGONAL:
            near, beyond = square(f + df, r + dr, 6), square(f + 2 * df, r + 2 * dr, 6)
            if (df, dr) in ORTHOGONAL and near is not None and near not in taken:
                moves.append(f"{stone}-{near}")
            elif near in taken and beyond is not None and beyond not in taken:
                moves.append(f"{stone}-{beyond}")
    # Back and forth: x-y then y-x in the mover's last two turns forbids x-y now.
    played = re.findall(
        rf"\d+ {position.mover} ([a-f]\d)(?:-[a-f]\d)*-([a-f]\d)",
        position.text.partition("Moves: ")[2].partition(". ")[0],
    )
    if len(played) >= 2 and played[-1] == played[-2][::-1]:
        banned = "-".join(played[-2])
        moves = [m for m in moves if m != banned] or moves
    return rng.choice(sorted(moves))


# -- Quad: drops (White's second on the rim), then orthogonal steps ----------------------


def quad_moves(position: Position, rng: random.Random) -> str:
    taken = position.occupied()
    if position.doing == "drop":
        empty = [s for s in square_names(8, 8) if s not in taken]
        if "on the rim" in position.status:
            empty = [s for s in empty if s[0] in "ah" or s[1:] in ("1", "8")]
        return rng.choice(empty)
    side = position.side_of(position.mover)
    moves = []
    for counter in position.pieces[side]:
        f, r = coords(counter)
        for df, dr in ORTHOGONAL:
            to = square(f + df, r + dr, 8)
            if to is not None and to not in taken:
                moves.append(f"{counter}-{to}")
    return rng.choice(sorted(moves))


# -- Quarod: placements of an engaged pair, swaps of engaged pieces ----------------------

RODS = {"north": (0, 1), "east": (1, 0), "south": (0, -1), "west": (-1, 0)}


def quarod_moves(position: Position, rng: random.Random) -> str:
    size = int(re.search(r"Board (\d+)x", position.text).group(1))  # type: ignore[union-attr]
    colour = {s: side for side, group in position.pieces.items() for s in group}
    details = {s: d for group in position.pieces.values() for s, d in group.items()}
    moves = []
    for name in square_names(size, size):
        f, r = coords(name)
        for df, dr in ((1, 0), (0, 1)):
            other = square(f + df, r + dr, size)
            if other is None:
                continue
            if name not in colour and other not in colour:
                moves += [f"B{name}+W{other}", f"B{other}+W{name}"]
            elif (
                name in colour
                and other in colour
                and colour[name] != colour[other]
                and details[name].endswith(", engaged")
                and details[other].endswith(", engaged")
                and not faces(name, details[name], other, size)
            ):
                moves.append(f"{name}<>{other}")
    return rng.choice(sorted(moves))


def faces(square_: str, detail: str, other: str, size: int) -> bool:
    """Whether the rod of the piece on `square_` points at `other` (engaged pieces point at
    their partner, so two engaged neighbours facing one another are engaged together)."""
    f, r = coords(square_)
    df, dr = RODS[detail.split()[1].rstrip(",")]
    return square(f + df, r + dr, size) == other


def parse_quarto(text: str) -> tuple[str, dict[str, str], str | None, list[str]]:
    """Who is to move, the pieces by square, the piece to place and the unused pieces,
    read from a words board mail alone."""
    mover = re.search(r"(\w+) to (?:give a piece|place)", text)
    assert mover is not None, text
    board: dict[str, str] = {}
    found = re.search(r"Pieces on the board, (\d+): (.*?)\.", text)
    assert found is not None, text
    if found.group(2) != "none":
        for item in found.group(2).split("; "):
            square, code = item.split()[:2]
            board[square] = code.rstrip(":")
    assert len(board) == int(found.group(1))
    held = re.search(r"To place: (\w{4}):", text)
    unused = re.search(r"Unused pieces \((\d+)\): ([A-Z ]+|none)\.", text)
    assert unused is not None, text
    left = [] if unused.group(2) == "none" else unused.group(2).split()
    return mover.group(1), board, held.group(1) if held else None, left


# -- Quarto: give one of the unused pieces, place the piece given ------------------------


def quarto_moves(position: Position, rng: random.Random) -> str:
    _, board, held, unused = parse_quarto(position.text)
    if held is None:
        return f"give {rng.choice(unused)}"
    empty = [s for s in square_names(4, 4) if s not in board]
    return rng.choice(empty) + (f" {rng.choice(unused)}" if unused else "")


Player = Callable[[Position, random.Random], str]
# The challenge, the player, and a seed with which the game ends by its rules (not at
# a ply cap: Quad's -plycap only bounds the test).
GAMES: dict[str, tuple[str, Player, str]] = {
    "quarto": ("quarto challenge alice bob", quarto_moves, "26"),
    "quarto-advanced": ("quarto challenge -advanced=yes alice bob", quarto_moves, "26"),
    "quadrature": ("quadrature challenge alice bob", quadrature_moves, "26"),
    "quadrupel": ("quadrupel challenge alice bob", quadrupel_moves, "26"),
    "quadrupel-combination": ("quadrupel-combination challenge alice bob", quadrupel_moves, "1"),
    "quad": ("quad challenge -plycap=400 alice bob", quad_moves, "0"),
    "quarod": ("quarod challenge alice bob", quarod_moves, "26"),
}


@pytest.mark.parametrize("game", GAMES)
def test_a_whole_game_from_the_words_alone(server: Server, game: str) -> None:
    server.config = replace(
        server.config, replies_per_address_hour=100_000, player_replies_per_hour=100_000
    )
    addresses = {u: server.signup(u) for u in ("alice", "bob")}
    for userid, address in addresses.items():
        assert server.send(address, f"set {userid} secret format words") == "done"
    challenge, player, seed = GAMES[game]
    server.new_mail()
    assert server.send(addresses["alice"], challenge) == "done"
    newest: dict[str, Sent] = {}  # each player's newest board mail

    def read_mail() -> None:
        for mail in server.new_mail():
            if "Board 101" in mail.subject:
                newest.update((address, mail) for address in mail.to)

    rng = random.Random(f"{game}-{seed}")  # a str seed: the same game on every run
    started = time.monotonic()  # a bound on a runaway loop, not a speed target
    played = 0
    for _ in range(1000):
        assert time.monotonic() - started < 900, f"{game}: {played} moves ran away"
        read_mail()
        text = flat(newest[addresses["alice"]])
        # A finished board's mail says its result above the moves, and its words no
        # longer say who is to move.
        status, _, words = text.partition("Moves: ")
        if re.search(r"\. Game (won by \w+[^.]*|was a tie)\.", status):
            assert STATUS.search(words) is None, text
            break
        mover = read_position(text).mover
        mine = newest[addresses[mover]]  # each player reads his own mail
        move = player(read_position(flat(mine)), rng)
        assert reply(server, mine, addresses[mover], move + "\n") == "done", (played, move)
        played += 1
    row = board_row(server, game.partition("-")[0])
    assert row.status == "finished", (game, row.status, row.move_count)
    assert "ply" not in (row.result_reason or ""), row.result_reason  # ended by the rules
    assert row.move_count == played
