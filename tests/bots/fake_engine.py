"""A misbehaving outside engine for tests/bots/test_external.py (standalone, no pbm).

Usage: fake_engine.py MODE [FILE]. It answers the handshake, then at `go`:
  crash    exits with status 3 (after a line on stderr)
  hang     never answers
  garbage  answers a line that is not part of the protocol
  bad      answers a move that is not in the game's notation (`bestmove zz99`)
  illegal  answers a move of the right shape that the rules forbid (`bestmove a1 TLRH`,
           at Quarto's opening where only a give is allowed)
  resign   resigns, saying the position is lost
  flaky    crashes the first time it runs (creating FILE), then plays `give TLRH`
  record   appends every line it receives to FILE, then plays `give SDQF`
  mute     never answers the handshake
"""

import sys
import time

mode = sys.argv[1]
path = sys.argv[2] if len(sys.argv) > 2 else ""


def say(line):
    print(line, flush=True)


if mode == "mute":
    time.sleep(60)
if mode == "flaky":
    try:
        open(path, "x").close()
        first_run = True
    except FileExistsError:
        first_run = False
for line in sys.stdin:
    line = line.strip()
    if mode == "record":
        with open(path, "a") as out:
            out.write(line + "\n")
    if line.startswith("pbm-engine"):
        say("info starting")
        say(f"ready fake-{mode}")
    elif line.startswith("go"):
        if mode == "crash" or (mode == "flaky" and first_run):
            print("fake engine: giving up", file=sys.stderr, flush=True)
            sys.exit(3)
        if mode == "hang":
            time.sleep(60)
        say(
            {
                "garbage": "hello there",
                "bad": "bestmove zz99",
                "illegal": "bestmove a1 TLRH",
                "resign": "verdict lost\nresign",
                "flaky": "bestmove give TLRH",
                "record": "info thinking\nbestmove give SDQF",
            }[mode]
        )
    elif line == "quit":
        break
