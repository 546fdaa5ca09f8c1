#!/usr/bin/env python3
"""A random Quarto player for pbm's outside-engine protocol (docs/engines.md).

Standalone on purpose (it does not import pbm): it reads Quarto's one-line position text,
places the piece it holds on a random empty square and gives a random piece left. Run it
as a bot with `pbm bot add NAME --games quarto --engine "python3 /ABSOLUTE/PATH/TO/pbm/
examples/random_engine.py"` (an engine runs in an empty directory of its own, so paths
are absolute).
Other games: it resigns. `--seed N` makes it repeatable.
"""

import random
import sys

PIECES = [h + c + s + t for h in "TS" for c in "LD" for s in "RQ" for t in "HF"]


def squares(board):
    """(square name, piece or None) for every square of `RANK4/RANK3/RANK2/RANK1`."""
    for row, text in enumerate(board.split("/")):
        file, i = 0, 0
        while i < len(text):
            piece = None if text[i] == "." else text[i : i + 4].upper()
            i += 1 if piece is None else 4
            yield "abcd"[file] + str(4 - row), piece
            file += 1


def random_move(position, rng):
    board_text, held = position.split()[:2]
    board = dict(squares(board_text))
    used = {p for p in board.values() if p} | {held.upper()}
    left = [p for p in PIECES if p not in used]
    if held == "-":  # the opening: give a piece
        return "give " + rng.choice(left)
    square = rng.choice([s for s, p in board.items() if p is None])
    return f"{square} {rng.choice(left)}" if left else square  # the 16th piece gives none


def main():
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else None
    rng = random.Random(seed)
    game = position = None
    for line in sys.stdin:
        word, _, rest = line.strip().partition(" ")
        if word == "pbm-engine":
            print("ready random-quarto 1.0", flush=True)
        elif word == "game":
            game = rest
        elif word == "position":
            position = rest
        elif word == "go":
            answer = "bestmove " + random_move(position, rng) if game == "quarto" else "resign"
            print(answer, flush=True)
        elif word == "quit":
            break


if __name__ == "__main__":
    main()
