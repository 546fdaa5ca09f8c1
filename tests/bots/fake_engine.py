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
  report   writes what it can see and use as one JSON line on stderr (environment,
           directory, user, limits, and its own pid), then plays `give TLRH`
  spawn    as report, after starting a child that leaves its session (`setsid`) and
           sleeps; the JSON has the child's pid as "child"
  flood    writes FILE megabytes to stderr, then plays `give TLRH`
  hog      allocates FILE megabytes of memory, then plays `give TLRH`
  spin     computes without end
  bigfile  writes a file of FILE megabytes in its directory, then plays `give TLRH`
  nostderr closes its standard error at once, then plays `give TLRH`
"""

import json
import os
import resource
import subprocess
import sys
import time

mode = sys.argv[1]
path = sys.argv[2] if len(sys.argv) > 2 else ""


def say(line):
    print(line, flush=True)


def report(child=None):
    home = os.getcwd()
    listing = sorted(os.listdir(home))
    with open(os.path.join(home, "probe"), "w") as probe:  # its directory is its to write
        probe.write("written")
    limits = {
        name: resource.getrlimit(getattr(resource, name))[0]
        for name in ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_CORE")
    }
    facts = {
        "env": dict(os.environ),
        "cwd": home,
        "listing": listing,
        "uid": os.getuid(),
        "gid": os.getgid(),
        "groups": os.getgroups(),
        "limits": limits,
        "pid": os.getpid(),
        "child": child,
        "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
    }
    print(json.dumps(facts), file=sys.stderr, flush=True)


def work(megabytes):
    if mode == "flood":
        chunk = "x" * 65535 + "\n"
        for _ in range(megabytes * 16):
            sys.stderr.write(chunk)
        sys.stderr.flush()
    elif mode == "hog":
        block = bytearray(megabytes * 1024 * 1024)
        block[-1] = 1
    elif mode == "bigfile":
        with open("big", "wb") as out:
            for _ in range(megabytes):
                out.write(b"x" * 1024 * 1024)
    elif mode == "spin":
        while True:
            pass


if mode == "mute":
    time.sleep(60)
if mode == "flaky":
    try:
        open(path, "x").close()
        first_run = True
    except FileExistsError:
        first_run = False
if mode == "nostderr":
    os.close(2)
child = None
if mode == "spawn":
    sleeper = "import time; time.sleep(60)"
    child = subprocess.Popen([sys.executable, "-c", sleeper], start_new_session=True).pid
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
        if mode in ("report", "spawn"):
            report(child)
        if mode in ("flood", "hog", "bigfile", "spin"):
            work(int(path))
        say(
            {
                "garbage": "hello there",
                "bad": "bestmove zz99",
                "illegal": "bestmove a1 TLRH",
                "resign": "verdict lost\nresign",
                "flaky": "bestmove give TLRH",
                "record": "info thinking\nbestmove give SDQF",
            }.get(mode, "bestmove give TLRH")
        )
    elif line == "quit":
        break
