"""What the daemon counts for its status file, health line and heartbeat."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Counters:
    received: int = 0
    duplicates: int = 0
    processed: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    store_errors: int = 0
