"""Board pictures (pbm.pictures): bytes and drawing time per game and variant.

For every registered game and every example option set, positions are sampled from
random playouts (each game's start, its end and a few positions between), and each is
drawn for the seat to move with the last move marked, given the move as the mail sender
gives it (pbm.services.mailing.mail_html). Prints, per variant: positions, median and largest
PNG bytes, median and slowest milliseconds per picture, wall clock and CPU time of this
process (the CPU figures stay honest on a busy machine); then the median CPU time of all
pictures against issue 21's target of 3 ms, and the largest against 40 KB.
`--compress-level N` deflates with zlib-ng level N (pbm's is pbm.pictures.png.COMPRESS_LEVEL),
to weigh bytes against time. `--samples DIR` also writes one picture per game
(DIR/board-GAME.png), a running position whose last move did something beyond its
notation where one turns up (a conversion, a capture, a placement).
`--instructions` instead counts the machine instructions of a picture under `valgrind
--tool=callgrind`, which a loaded machine changes much less than CPU time: the same
positions (`--games`: two playouts per variant here, six for the times) drawn once to warm
the caches, then drawn once more or not, in two runs whose difference is the pictures
(run it on two trees to compare them; a few minutes).
Usage: python benchmarks/pictures.py [--games N] [--seed S] [--compress-level N]
       [--samples DIR] [--instructions] [GAME ...]
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbm.app import register
from pbm.games import GAMES, get_game
from pbm.pictures import png
from pbm.pictures.picture import draw
from pbm.services.play.picture_words import picture_words

# The words of the pictures as the templates hold them.
WORDS = picture_words()

MAX_BYTES = 40_000
MAX_MS = 3.0  # the median CPU time of a picture (issue 21)
# The variant and the earliest ply of each game's sample picture in docs/images/.
SAMPLES: dict[str, tuple[dict[str, Any], int]] = {
    "quadrature": ({}, 24),
    "quarto": ({}, 7),
    "quadrupel": ({"variant": "points"}, 10),
    "quad": ({}, 30),
    "quarod": ({}, 20),
}


def playout(game, options, rng, moves=None):
    """Every state of one random game, start to end (and its moves into `moves`)."""
    state = game.new_state(**options)
    states = [state]
    while game.to_move(state) is not None:
        move = rng.choice(game.legal_moves(state))
        state = game.apply(state, move)
        states.append(state)
        if moves is not None:
            moves.append(move)
    return states


def sample(game, options, games, rng):
    """(previous, move, state): start, end and three random positions of each game."""
    triples = []
    for _ in range(games):
        moves = []
        states = playout(game, options, rng, moves)
        picks = {0, len(states) - 1, *(rng.randrange(len(states)) for _ in range(3))}
        triples += [
            (states[i - 1], moves[i - 1], states[i]) if i else (None, None, states[i])
            for i in sorted(picks)
        ]
    return triples


def measure(game, triples):
    """Bytes, wall-clock and CPU milliseconds of each picture."""
    sizes, walls, cpus = [], [], []
    players = ("alice", "bob")
    for previous, move, state in triples:
        seat = game.to_move(state)
        wall, cpu = time.perf_counter(), time.process_time()
        picture = draw(
            game, state, seat=seat, words=WORDS, previous=previous, move=move, players=players
        )
        cpus.append((time.process_time() - cpu) * 1000)
        walls.append((time.perf_counter() - wall) * 1000)
        sizes.append(len(picture.png))
    return sizes, walls, cpus


def write_samples(directory: Path, names, seed: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        game = get_game(name)
        options, min_ply = SAMPLES[name]
        rng = random.Random(seed)
        chosen = None
        for _ in range(50):
            states = playout(game, options, rng)
            running = [i for i in range(max(min_ply, 1), len(states)) if game.to_move(states[i])]
            if not running:
                continue
            chosen = chosen or (states[running[0] - 1], states[running[0]])
            for i in running:
                before = states[i - 1]
                move = next(
                    m for m in game.legal_moves(before) if game.apply(before, m) == states[i]
                )
                if game.describe_move(before, move) != game.format_move(before, move):
                    chosen = (before, states[i])
                    break
            else:
                continue
            break
        assert chosen is not None, f"no running position in {name}"
        previous, state = chosen
        picture = draw(
            game,
            state,
            seat=game.to_move(state),
            words=WORDS,
            previous=previous,
            heading=f"{game.title} board 101",
            players=("alice", "bob"),
        )
        path = directory / f"board-{name}.png"
        path.write_bytes(picture.png)
        print(f"wrote {path} ({len(picture.png)} bytes): {picture.alt}")


def every_sample(names, count: int, seed: int):
    """(game, previous, move, state) of every variant of `names`, as the report draws them."""
    rng = random.Random(seed)
    return [
        (game, *triple)
        for game in map(get_game, names)
        for options in game.example_options
        for triple in sample(game, options, count, rng)
    ]


def inner(names, count: int, seed: int, again: bool) -> None:
    """Draw every sample once, and once more if `again` (run under Valgrind)."""
    samples = every_sample(names, count, seed)
    for _ in range(2 if again else 1):
        for game, previous, move, state in samples:
            seat = game.to_move(state)
            draw(game, state, seat=seat, words=WORDS, previous=previous, move=move,
                 players=("alice", "bob"))  # fmt: skip
    print(f"drew {len(samples)}")


def counted(args, again: bool) -> tuple[int, int]:
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    command += [__file__, "--inner", "1" if again else "0", "--games", str(args.count)]
    command += ["--seed", str(args.seed), *args.games]
    if args.compress_level is not None:
        command += ["--compress-level", str(args.compress_level)]
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", run.stderr)
    drew = re.search(r"drew (\d+)", run.stdout)
    assert found and drew, run.stderr[-2000:]
    return int(found.group(1)), int(drew.group(1))


def instructions_report(args) -> None:
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: apt-get install valgrind")
    once, drew = counted(args, again=False)
    twice, _ = counted(args, again=True)
    print(
        f"{(twice - once) / drew / 1e6:.2f} million instructions a picture ({drew} pictures,"
        f" warm caches, zlib-ng level {args.compress_level or png.COMPRESS_LEVEL})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", help="games to measure (default: all)")
    parser.add_argument(
        "--games", dest="count", type=int, help="playouts per variant (6; 2 counted)"
    )
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--samples", type=Path, help="write one sample picture per game here")
    parser.add_argument("--compress-level", type=int, help="zlib-ng level of the PNGs (0-9)")
    parser.add_argument("--instructions", action="store_true", help="count with callgrind")
    parser.add_argument("--inner", choices=("0", "1"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compress_level is not None:
        png.COMPRESS_LEVEL = args.compress_level
    names = args.games or list(GAMES)
    if args.inner:
        inner(names, args.count, args.seed, again=args.inner == "1")
        return
    if args.instructions:
        args.count = args.count or 2
        instructions_report(args)
        return
    args.count = args.count or 6
    rng = random.Random(args.seed)
    # The first picture loads the fonts; leave it out of the figures.
    warm = get_game(names[0])
    draw(warm, warm.new_state(), seat=None, words=WORDS)
    print(f"{'game':<11} {'options':<40} {'pos':>4} {'bytes med':>9} {'bytes max':>9}"
          f" {'ms med':>7} {'ms max':>7} {'cpu med':>7} {'cpu max':>7}")  # fmt: skip
    worst_bytes, worst_ms, worst_cpu = 0, 0.0, 0.0
    every_cpu, every_size = [], []
    for name in names:
        game = get_game(name)
        for options in game.example_options:
            sizes, walls, cpus = measure(game, sample(game, options, args.count, rng))
            label = " ".join(f"{k}={v}" for k, v in options.items()) or "(default)"
            print(
                f"{name:<11} {label:<40} {len(sizes):>4} {statistics.median(sizes):>9.0f}"
                f" {max(sizes):>9} {statistics.median(walls):>7.1f} {max(walls):>7.1f}"
                f" {statistics.median(cpus):>7.1f} {max(cpus):>7.1f}"
            )
            worst_bytes = max(worst_bytes, *sizes)
            worst_ms, worst_cpu = max(worst_ms, *walls), max(worst_cpu, *cpus)
            every_cpu += cpus
            every_size += sizes
    # The verdict takes the CPU time: on a shared machine the wall clock also counts the
    # time other processes held the core.
    median_cpu = statistics.median(every_cpu)
    verdict = "within" if worst_bytes <= MAX_BYTES and median_cpu <= MAX_MS else "OVER"
    print(
        f"{len(every_cpu)} pictures at zlib-ng level {png.COMPRESS_LEVEL}: median"
        f" {median_cpu:.2f} ms of CPU and {statistics.median(every_size):.0f} bytes a picture;"
        f" largest {worst_bytes} bytes, slowest {worst_cpu:.1f} ms of CPU ({worst_ms:.1f} ms"
        f" wall clock): {verdict} the targets ({MAX_BYTES} bytes, {MAX_MS:.0f} ms a picture)"
    )
    if args.samples:
        write_samples(args.samples, names, args.seed)


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
