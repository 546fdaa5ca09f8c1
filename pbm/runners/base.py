"""What every runner shares: a task started on the daemon's loop that runs until the
daemon's stop event is set, and the events that wake the processor and the sender."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

# Stored messages from other processes (pipe intake, CLI), due retries and queued mail
# are picked up within this many seconds even when nothing in this process wakes them.
IDLE_TICK_SECONDS = 1.0


@dataclass
class Signals:
    """The daemon's stop event and the wake-ups its runners give each other."""

    stop: asyncio.Event = field(default_factory=asyncio.Event)
    process: asyncio.Event = field(default_factory=asyncio.Event)  # messages to process
    outbox: asyncio.Event = field(default_factory=asyncio.Event)  # mail to send


async def wait(event: asyncio.Event, seconds: float) -> None:
    """Until `event` is set or `seconds` passed."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), seconds)


class Runner:
    """One worker of the daemon: `start` runs `run` as a task, which returns once the
    daemon's stop event is set; `stop` wakes it to see that."""

    name = "runner"

    def __init__(self, signals: Signals) -> None:
        self.signals = signals

    def start(self) -> asyncio.Task[None]:
        return asyncio.create_task(self.run(), name=self.name)

    def stop(self) -> None:
        """Wake the runner (the daemon set the stop event)."""

    async def run(self) -> None:
        raise NotImplementedError
