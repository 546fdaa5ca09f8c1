"""What a finished board's mail says about its end: one result line, and a drawing
without the rules' own "to move" or "Game over" lines.

The rules modules draw their status under the board (`Game.render`): who is to move,
or how the game ended. A board mail says the result once, in its status block ("Game
won by bob." with the reason), so on the final position of a finished board (won,
drawn, resigned, forfeited, removed) the drawing leaves those lines out: a resigned
Quadrature board would otherwise still say "Black to move".
"""

from __future__ import annotations

import re
from functools import cache

from pbm.games import AnyGame as Rules
from pbm.texts import WIDTH


@cache
def _status_start(rules: Rules) -> re.Pattern[str]:
    """The first status line each rules module draws under its board:
    - "Game over..." once the game ended: quad.Quad._status, quadrature.render,
      quadrupel._status_lines, quarod.render;
    - "<seat> to move / to drop / to set up" and "<seat> (X) to move": the same four,
      Quadrupel naming the symbol; Quadrupel's extra turns, "<seat> completed a ...",
      come first;
    - Quarto's "To give (First)...", "To place (Second)...", "QUARTO! ..." and
      "Draw: ..." (quarto.Quarto._status), followed by the pieces left and the key."""
    seats = "|".join(re.escape(name) for name in rules.seats)
    return re.compile(
        rf"Game over\b|(?:{seats})(?: \(\S\))? to (?:move|drop|set up)\b"
        rf"|(?:{seats}) completed an? |To (?:give|place) \(|QUARTO!|Draw:"
    )


# Quarto's lines after its status: the pieces not yet used and the key to the letters.
_STATUS_END = re.compile(r"Unused \(|Key:")


def without_status(rules: Rules, drawing: str) -> str:
    """A finished board's drawing without the lines that say whose turn it is or how
    the game ended (and their continuation lines)."""
    start = _status_start(rules)
    kept: list[str] = []
    dropping = False
    for line in drawing.split("\n"):
        text = line.strip()
        if start.match(text):
            dropping = True
        elif dropping and _STATUS_END.match(text):
            dropping = False
        if not dropping:
            kept.append(line)
    return "\n".join(kept).rstrip("\n")


def with_reason(reason: str, result: str, final_reason: str | None) -> str:
    """The result line of a finished board: the reason, then the result, on one line
    when it fits ("bob resigns. Game won by alice."). `final_reason` is the rules'
    own reason for the final position, if it ended by the rules: that fragment
    ("quarto: row 1 all tall") becomes a sentence like the server's reasons."""
    sentence = reason.strip()
    if not sentence:
        return result
    if sentence == final_reason and not sentence.lower().startswith("pbm"):
        sentence = sentence[0].upper() + sentence[1:]
    if not sentence.endswith((".", "!", "?")):
        sentence += "."
    joined = f"{sentence} {result}"
    return joined if len(joined) <= WIDTH else f"{sentence}\n{result}"
