"""How long the command line takes to start (issue 24, point 14).

Runs each command N times, each in a fresh interpreter, and prints min and median wall
time and CPU time (user + system, of the child alone: on a loaded machine it is the
steadier figure):
  - `pbm --help`, `pbm mail send --help`, `pbm user list --help`;
  - `pbm mail send` submitting one message to an SMTP sink on 127.0.0.1 (aiosmtpd);
then `python -X importtime -c "import pbm.cli"` N times (min and median of pbm.cli's
cumulative import time), and the imports that remain at start, each with its cost.

Usage: .venv/bin/python benchmarks/cli_startup.py [--runs 10] [--root DIR]
--root runs the pbm of another checkout (e.g. `git archive` of an older commit, unpacked)
with this interpreter, for a before/after comparison.
Target (issue 24): `pbm --help` and `pbm mail send` under 0.3 s.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aiosmtpd.controller import Controller

HERE = Path(__file__).resolve().parents[1]
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)")


class Sink:
    """An SMTP server that accepts every message and keeps none."""

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        return "250 OK"


def _environment(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PBM_CONFIG"}
    env["PYTHONPATH"] = str(root)
    return env


def _timed(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """Wall and CPU seconds of one run of argv (its output dropped); fails loudly."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def _row(label: str, runs: list[tuple[float, float]]) -> str:
    walls = [w * 1000 for w, _ in runs]
    cpus = [c * 1000 for _, c in runs]
    return (
        f"{label:<28} wall min {min(walls):6.0f} ms  median {statistics.median(walls):6.0f} ms"
        f"   CPU min {min(cpus):6.0f} ms  median {statistics.median(cpus):6.0f} ms"
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _importtime(env: dict[str, str], cwd: str) -> tuple[int, list[tuple[str, int]]]:
    """pbm.cli's cumulative import time (µs), and its direct imports with their cost."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import pbm.cli"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    rows = [m.groups() for m in map(IMPORT_LINE.match, done.stderr.splitlines()) if m]
    children: list[tuple[str, int]] = []
    total = 0
    for _self, cumulative, indent, name in rows:
        if not indent:  # a top-level import: what came before it was another's
            if name == "pbm.cli":
                total = int(cumulative)
                break
            children = []
        elif len(indent) == 2:
            children.append((name, int(cumulative)))
    return total, children


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout whose pbm runs")
    args = parser.parse_args()
    env = _environment(args.root.resolve())
    pbm = [sys.executable, "-m", "pbm"]
    controller = Controller(Sink(), hostname="127.0.0.1", port=_free_port())
    controller.start()
    try:
        with tempfile.TemporaryDirectory(prefix="pbm-cli-startup-") as cwd:
            server = f"127.0.0.1:{controller.port}"
            send = ["mail", "send", "hello", "--from", "a@example.org", "--body", "x"]
            commands = {
                "pbm --help": ["--help"],
                "pbm mail send --help": ["mail", "send", "--help"],
                "pbm user list --help": ["user", "list", "--help"],
                "pbm mail send (to a sink)": [*send, "--server", server],
            }
            print(f"pbm from {args.root.resolve()}, {args.runs} runs each")
            for label, words in commands.items():
                runs = [_timed([*pbm, *words], env, cwd) for _ in range(args.runs)]
                print(_row(label, runs))
            measured = [_importtime(env, cwd) for _ in range(args.runs)]
    finally:
        controller.stop()
    totals = [total / 1000 for total, _ in measured]
    print(
        f'python -X importtime -c "import pbm.cli": min {min(totals):.0f} ms'
        f"  median {statistics.median(totals):.0f} ms"
    )
    print("imports of pbm.cli (cumulative, fastest run's order; over 1 ms):")
    fastest = min(measured)[1]
    for name, micros in sorted(fastest, key=lambda item: -item[1]):
        if micros >= 1000:
            print(f"  {name:<28} {micros / 1000:6.1f} ms")


if __name__ == "__main__":
    main()
