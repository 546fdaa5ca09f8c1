"""What a finished board's mail says about its end: one result line.

A board mail says the result once, in its status block ("Game won by bob." with the
reason), so the final position of a finished board (won, drawn, resigned, forfeited,
removed) is drawn without the rules' headline (`Game.render(..., headline=False)`): a
resigned Quadrature board would otherwise still say "Black to move".
"""

from __future__ import annotations

from pbm.texts import WIDTH


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
