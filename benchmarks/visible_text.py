"""What dropping controls and bidi characters costs each mail (issue 21, point 7).

`compose` passes every mail's text through `pbm.mail.visible.visible`. For a Quarto
board mail's text with a comment, this prints the microseconds of CPU per call of
`visible` on clean text (the common case), on text holding one U+202E, and of the
whole `compose` of that mail (median of ROUNDS batches of BATCH calls).

    .venv/bin/python benchmarks/visible_text.py
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbm.app import register
from pbm.games import get_game
from pbm.mail.compose import compose
from pbm.mail.visible import visible

ROUNDS = 15
BATCH = 2000


def _median_us(work: Callable[[], object]) -> float:
    times = []
    for _ in range(ROUNDS):
        began = time.process_time()
        for _ in range(BATCH):
            work()
        times.append((time.process_time() - began) / BATCH)
    return statistics.median(times) * 1e6


def main() -> None:
    rules = get_game("quarto")
    board = rules.render(rules.new_state())
    text = f"{board}\nalice writes:\nGrüße aus Köln, good luck 🙂\n"
    marked = text + "a\u202eb\n"
    when = datetime(2026, 11, 22, tzinfo=UTC)

    def composed() -> bytes:
        # The headers of a board mail to bob; only the body matters here.
        to, subject, message_id = ["bob@example.net"], "Quarto Board 101 bob", "<pbm.1@example.org>"
        return compose(
            sender="pbm@example.org",
            to=to,
            subject=subject,
            body=text,
            message_id=message_id,
            date=when,
        )

    print(f"text of {len(text)} characters")
    print(f"visible, clean text:      {_median_us(lambda: visible(text)):8.1f} us")
    print(f"visible, with a U+202E:   {_median_us(lambda: visible(marked)):8.1f} us")
    print(f"compose, the whole mail:  {_median_us(composed):8.1f} us")


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
