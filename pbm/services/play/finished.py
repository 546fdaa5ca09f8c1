"""What a finished board's mail says about its end: one result line.

A board mail says the result once, in its status block ("Game won by bob." with the
reason), so the final position of a finished board (won, drawn, resigned, forfeited,
removed) is drawn without the rules' headline (`Game.render(..., headline=False)`): a
resigned Quadrature board would otherwise still say "Black to move".
"""

from __future__ import annotations

from pbm.store.models import EndReason
from pbm.texts import WIDTH


def with_reason(reason: str, result: str, end: EndReason | None) -> str:
    """The result line of a finished board: the reason, then the result, on one line
    when it fits ("bob resigns. Game won by alice."). When the rules ended the board
    (`end`), the reason is the rules' fragment ("quarto: row 1 all tall"), made a
    sentence like the server's reasons."""
    sentence = reason.strip()
    if not sentence:
        return result
    # A fragment that starts with a name written in lower case ("pbm") keeps it.
    if end is EndReason.RULES and not sentence.lower().startswith("pbm"):
        sentence = sentence[0].upper() + sentence[1:]
    if not sentence.endswith((".", "!", "?")):
        sentence += "."
    joined = f"{sentence} {result}"
    return joined if len(joined) <= WIDTH else f"{sentence}\n{result}"
