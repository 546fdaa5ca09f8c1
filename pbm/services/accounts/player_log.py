"""pbm's log of one player, as his copy of his data shows it (docs/privacy.md, "Log
lines"): pbm writes its running log to standard error, not to its database, so what it
keeps about him over time is the rows that record events: the mails he sent and their
handling, the mails to him and their delivery, the bounces and complaints of his
mailboxes, his password failures, the reminders and digests sent to him, and his
erasure and export requests. Each becomes one line, oldest first."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import ColumnElement, false, or_
from sqlmodel import SQLModel

Rows = dict[str, list[dict[str, Any]]]


@dataclass(frozen=True)
class LogLine:
    at: str  # UTC, as the copy writes times (2026-11-22T02:41:00Z): sorts as text
    source: str  # the table it comes from
    row: int  # the row's id in that table
    text: str


def _last_line(text: str | None) -> str:
    """An error's last line (a traceback's says what it was)."""
    lines = (text or "").strip().splitlines()
    return lines[-1] if lines else ""


def _inbound(row: dict[str, Any]) -> list[LogLine]:
    mail, table, row_id = f"mail {row['message_id']}", "inbound_messages", row["id"]
    received = f"{mail} received via {row['via']}"
    handled = f"{row['status']}" + (f" ({_last_line(row['error'])})" if row.get("error") else "")
    if not row.get("processed_at"):
        return [LogLine(row["received_at"], table, row_id, f"{received}: {handled}")]
    return [
        LogLine(row["received_at"], table, row_id, received),
        LogLine(row["processed_at"], table, row_id, f"{mail} processed: {handled}"),
    ]


def _outbox(row: dict[str, Any]) -> list[LogLine]:
    to = ", ".join(json.loads(row["recipients"]))
    why = f" ({row['reason']})" if row.get("reason") else ""
    text = f"mail {row['message_id']} to {to}{why} queued: {row['subject']}"
    lines = [LogLine(row["created_at"], "outbox", row["id"], text)]
    if row.get("sent_at"):
        lines.append(LogLine(row["sent_at"], "outbox", row["id"], f"mail {row['message_id']} sent"))
    elif row["status"] == "failed":
        failed = f"mail {row['message_id']} failed: {_last_line(row.get('last_error'))}"
        lines.append(LogLine(row["next_attempt_at"], "outbox", row["id"], failed))
    return lines


def _bounce(row: dict[str, Any]) -> list[LogLine]:
    mail = f" of mail #{row['outbox_id']}" if row.get("outbox_id") else ""
    text = f"{row['kind']} bounce{mail} from {row['mailbox']}: {row['status'] or '-'}"
    return [LogLine(row["at"], "bounce_events", row["id"], text)]


def _health(row: dict[str, Any]) -> list[LogLine]:
    lines = []
    if row.get("disabled_at"):
        text = f"mail to {row['mailbox']} stopped: it bounced too often"
        lines.append(LogLine(row["disabled_at"], "mailbox_health", row["id"], text))
    if row.get("complained_at"):
        text = f"{row['mailbox']} reported a mail as spam: notifications stopped"
        lines.append(LogLine(row["complained_at"], "mailbox_health", row["id"], text))
    return lines


def _rate(row: dict[str, Any]) -> list[LogLine]:
    return [LogLine(row["at"], "rate_events", row["id"], f"{row['kind']} counted for {row['key']}")]


def _erasure(row: dict[str, Any]) -> list[LogLine]:
    lines = [LogLine(row["asked_at"], "erasure_requests", row["id"], "erasure asked")]
    if row.get("confirmed_at"):
        text = f"erasure confirmed, due {row['due_at']}"
        lines.append(LogLine(row["confirmed_at"], "erasure_requests", row["id"], text))
    return lines


def _export_part(row: dict[str, Any]) -> list[LogLine]:
    text = f"export part {row['number']} due"
    return [LogLine(row["due_at"], "export_parts", row["id"], text)]


def _mark(row: dict[str, Any]) -> list[LogLine]:
    if row["kind"] == "digest":
        text = f"digest of {row['key'].partition(':')[2]} sent"
    else:
        game, move, _seat = row["key"].split(":")
        text = f"reminder sent on board #{game} at move {move}"
    return [LogLine(row["at"], "job_marks", row["id"], text)]


_FROM_TABLE = {
    "inbound_messages": _inbound,
    "outbox": _outbox,
    "bounce_events": _bounce,
    "mailbox_health": _health,
    "rate_events": _rate,
    "erasure_requests": _erasure,
    "export_parts": _export_part,
    "job_marks": _mark,
}


def marks_condition(user_id: int, seats: list[tuple[int, int]]) -> ColumnElement[bool]:
    """The job marks about a player: his digests (`USER:DAY`,
    pbm.services.correspondence.digest) and the reminders on his seats (`GAME:MOVE:SEAT`,
    pbm.services.correspondence.timeouts)."""
    marks = SQLModel.metadata.tables["job_marks"]
    digests = (marks.c.kind == "digest") & marks.c.key.startswith(f"{user_id}:", autoescape=True)
    nags = [marks.c.key.like(f"{game}:%:{seat}") for game, seat in seats]
    return or_(digests, (marks.c.kind == "nag") & or_(false(), *nags))


def log_lines(tables: Rows) -> list[dict[str, Any]]:
    """His log, oldest first, from the rows of his copy of his data
    (pbm.services.accounts.my_data)."""
    lines = [
        line
        for name, make in _FROM_TABLE.items()
        for row in tables.get(name, [])
        for line in make(row)
    ]
    # Stable: lines of one moment keep the order of the tables and of each row's events.
    return [asdict(line) for line in sorted(lines, key=lambda line: line.at)]
