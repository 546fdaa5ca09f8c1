"""What a finished board's mail says about its end: one result line.

A board mail says the result once, in its status block ("Game won by bob." with the
reason), so the final position of a finished board (won, drawn, resigned, forfeited,
removed) is drawn without the rules' headline (`Game.render(..., headline=False)`): a
resigned Quadrature board would otherwise still say "Black to move".
"""

from __future__ import annotations

from collections.abc import Sequence

from pbm.store.models import EndReason
from pbm.texts import WIDTH, phrase


def outcome(
    status: str,
    result: str | None,
    winner: int | None,
    scores: Sequence[int] | None,
    userids: Sequence[str],
) -> str | None:
    """The result of an ended board ("Game won by alice.", "Game was a tie.", "This
    board has been removed."), or None while it runs: one sentence for a stored board
    and for a game record."""
    if status == "removed":
        return phrase("status_removed")
    if result == "tie":
        return phrase("status_tie")
    if result == "won" and winner is not None:
        if scores:
            margin = scores[winner] - max(s for i, s in enumerate(scores) if i != winner)
            return phrase("status_won_points", userid=userids[winner], points=margin)
        return phrase("status_won", userid=userids[winner])
    return None


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
