"""Machine instructions per move command through process_message, counted by Valgrind.

benchmarks/process.py measures move commands per second of CPU, which swings by a
quarter from run to run on a shared virtual machine. An instruction count does not:
run this on two trees to see what a change costs, then scale a quiet-machine figure of
process.py by the ratio. It runs a small copy of process.py's set-up (300 boards, 20
moves each) twice under `valgrind --tool=callgrind`, once processing only the 20
warm-up messages and once 40 more move commands, and prints the difference per move
command (set-up, imports and warm-up cancel out). Each run takes a few minutes.

Usage: .venv/bin/python benchmarks/process_instructions.py   (needs Debian's valgrind)
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import process  # benchmarks/process.py, beside this script: its set-up

from pbm.app import register
from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.intake import process_message
from pbm.services.accounts.passwords import verify_password
from pbm.store.engine import make_engine, session_for
from pbm.store.models import User
from pbm.store.schema import init_db

WARM_UP = 20
MOVES = 40


def inner(count: int) -> None:
    """Set up and process WARM_UP + `count` move commands (run under Valgrind)."""
    rng = random.Random(5)
    path = Path(tempfile.mkdtemp()) / "bench.sqlite3"
    config = Config(
        data_dir=path.parent, database_url=f"sqlite:///{path}", server_address="pbm@example.org"
    )
    engine = make_engine(config.database_url)
    init_db(engine)
    active = process.build(engine, 300, 20, 100, rng)
    clock = FrozenClock(process.START + timedelta(days=1))
    messages = process.move_messages(engine, active, rng, WARM_UP + MOVES)
    with session_for(engine) as session:
        stored = session.get(User, 1)
        assert stored is not None
        verify_password(process.PASSWORD, stored.password_hash)
    done = [
        process_message(engine, raw, via="pipe", clock=clock, config=config)
        for raw in messages[: WARM_UP + count]
    ]
    assert done.count("done") == len(done), done
    shutil.rmtree(path.parent)


def counted(count: int) -> int:
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        __file__,
        "--inner",
        str(count),
    ]
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", run.stderr)
    assert found, run.stderr[-2000:]
    return int(found.group(1))


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--inner":
        inner(int(sys.argv[2]))
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: apt-get install valgrind")
    base, more = counted(0), counted(MOVES)
    per_move = (more - base) / MOVES
    print(f"{per_move / 1e6:.2f} million instructions per move command ({MOVES} counted)")


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    main()
