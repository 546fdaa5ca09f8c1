"""The benchmarks' --cpu-clock: the bots' budgets counted in this process's CPU time.

A bot's budget is wall time, as in play (pbm.bots.tactics.Clock reads
time.perf_counter), so on a machine shared with other work a bot gets only part of a
core. Reading the process's CPU time instead stands in for "the bot has a core to
itself": a move then takes its whole budget of CPU, however busy the machine is.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbm.bots import tactics


class _CpuTime:
    """Stands in for the `time` module in pbm.bots.tactics: its clocks read CPU time."""

    perf_counter = staticmethod(time.process_time)


def count_budgets_in_cpu_time() -> None:
    """From now on, every bot clock of this process counts CPU time."""
    tactics.time = _CpuTime  # type: ignore[assignment]
