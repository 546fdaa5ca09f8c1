"""What the HTML part of a board mail costs when the mail is sent (issue 13).

The move's transaction queues the text mail and an order for its HTML part; the sender
makes that part outside any transaction: it replays the position (and the one before
it, to mark the last move), draws it and adds the HTML alternative to the queued text
(pbm.services.mailing.mail_html.with_html_part). For a middle position of a seeded random game
of each game's default rules this prints the PNG's size, the mail's size with and
without the HTML part, and the milliseconds of CPU per mail (median of ROUNDS) for the
whole send-side work of the first mail of a position (the whole game replayed, the
picture drawn), of the next mails of that position (the picture kept: its other
readers), and for replaying and drawing alone.

    .venv/bin/python benchmarks/html_mail.py
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbm.app import register
from pbm.games import GAMES
from pbm.mail.compose import compose
from pbm.services.mailing import mail_html
from pbm.services.mailing.mail_html import Drawing, Pictures, with_html_part
from pbm.services.play.picture_words import picture_words

ROUNDS = 30


def _median_ms(work: object, *, kept: bool = False) -> float:
    """CPU milliseconds of `work`, with nothing drawn or replayed before unless `kept`."""
    assert callable(work)
    times = []
    for _ in range(ROUNDS):
        if not kept:
            mail_html.PICTURES = Pictures()
        began = time.process_time()
        work()
        times.append(time.process_time() - began)
    return statistics.median(times) * 1000


def main() -> None:
    print(
        f"{'game':<11} {'png':>7} {'mail html':>10} {'mail text':>10} {'first ms':>8}"
        f" {'next ms':>8} {'draw ms':>8}"
    )
    for name, game in GAMES.items():
        rng = random.Random(13)
        states = [game.new_state()]
        moves: list[str] = []
        while game.to_move(states[-1]) is not None and len(states) < 400:
            move = rng.choice(game.legal_moves(states[-1]))
            moves.append(game.format_move(states[-1], move))
            states.append(game.apply(states[-1], move))
        middle = max(1, len(states) // 2)
        drawing = Drawing(
            game, (), tuple(moves[:middle]), None, f"{game.title} Board 101", picture_words()
        )
        text = compose(
            sender="PBeM Server <pbm@example.org>",
            to=["alice@players.example"],
            subject=f"{game.title} Board 101 alice",
            body=game.render(states[middle], None),
            message_id="<pbm.k3q9z7m2p4x8.1@example.org>",
            date=datetime(2026, 11, 22, tzinfo=UTC),
        )
        both = with_html_part(text, [drawing])
        first = _median_ms(lambda: with_html_part(text, [drawing]))  # noqa: B023
        after = _median_ms(lambda: with_html_part(text, [drawing]), kept=True)  # noqa: B023
        drawn = _median_ms(lambda: mail_html.picture(drawing))  # noqa: B023
        png = len(mail_html.picture(drawing).png)
        print(
            f"{name:<11} {png:>7} {len(both):>10} {len(text):>10} {first:>8.1f} {after:>8.1f}"
            f" {drawn:>8.1f}"
        )


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
