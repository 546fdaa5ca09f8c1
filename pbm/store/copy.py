"""Copying a whole installation from one database into another, empty one (`pbm db
copy`, SQLite to PostgreSQL): every table in dependency order, streamed in batches, in
one transaction on the target, each table's rows counted on both sides before the commit."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import Table, func, insert, select, text
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlmodel import SQLModel

from pbm.store.engine import sqlite_file
from pbm.store.schema import known_revisions, schema_heads, stored_heads

BATCH = 1000  # rows read and inserted at a time: a few MB of mail at most

# The heartbeats of the daemons that ran on the source: each row is a process of the
# source's cluster, which never runs on the target (the daemons started there write
# their own rows), and a claim naming it is cleared below. Job locks are PostgreSQL
# advisory locks, held by a transaction and never stored, so there is nothing of them
# to leave out; job_marks (what a job did: nags, digests, a due time run) are copied, so
# that nothing is mailed twice.
NOT_COPIED = frozenset({"daemons"})
# A claim belongs to a daemon of the source's cluster: on the target the message or
# mail is free for whichever daemon starts there first.
UNCLAIMED = {
    "inbound_messages": ("claimed_by", "claimed_until"),
    "outbox": ("claimed_by", "claimed_until"),
}


class CopyRefused(Exception):
    """A copy that must not start, or that stopped and left the target as it was: the
    sentence says why."""


@dataclass(frozen=True)
class Copied:
    """One table copied: its name and how many rows it holds on both sides now."""

    table: str
    rows: int


def copied_tables() -> list[Table]:
    """The tables a copy moves, parents before the tables that refer to them."""
    return [t for t in SQLModel.metadata.sorted_tables if t.name not in NOT_COPIED]


def same_database(a: str, b: str) -> bool:
    """Whether the URLs `a` and `b` name one database (a SQLite file by its resolved
    path; a server database by its kind, host, port and name, whatever the driver and
    however the host is written: `localhost`, `127.0.0.1` and `::1` are one host)."""
    files = sqlite_file(a), sqlite_file(b)
    if files[0] is not None or files[1] is not None:
        return None not in files and _resolved(files[0]) == _resolved(files[1])
    first, second = make_url(a), make_url(b)
    return _where(first) == _where(second) and bool(
        _host_addresses(first.host) & _host_addresses(second.host)
    )


def _resolved(path: Path | None) -> Path | None:
    return None if path is None else path.expanduser().resolve()


def _where(url: URL) -> tuple[str, int | None, str | None]:
    """The kind, port (the server's default when none is written) and database name."""
    backend = url.get_backend_name()
    return (backend, url.port or DEFAULT_PORTS.get(backend), url.database)


# The port a server database listens on when its URL names none.
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306, "mariadb": 3306, "mssql": 1433}
LOCAL = "this machine"  # what a loopback address, or one of this host's own, stands for


def _host_addresses(host: str | None) -> set[str]:
    """The addresses `host` resolves to, every address of this machine (loopback or its
    own name's) written LOCAL; a name that does not resolve stands for itself. No host
    is the server's local socket: this machine too."""
    if not host:
        return {LOCAL}
    found = _addresses(host)
    if not found:
        return {host.lower().rstrip(".")}
    return {LOCAL if _local(address) else address for address in found}


def _addresses(host: str) -> set[str]:
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return set()
    return {str(info[4][0]).partition("%")[0] for info in infos}


def _local(address: str) -> bool:
    """Whether `address` is this machine's: a loopback one, or one its own name has."""
    try:
        if ipaddress.ip_address(address).is_loopback:
            return True
    except ValueError:
        return False
    return address in _own_addresses()


@cache
def _own_addresses() -> frozenset[str]:
    return frozenset(_addresses(socket.gethostname()) | _addresses(socket.getfqdn()))


def check_source(source: Engine) -> None:
    """Refuse a source whose schema is not this pbm's newest (CopyRefused): its rows
    would not fit the target's tables."""
    have = stored_heads(source)
    want = schema_heads()
    if have == want:
        return
    if not have:
        raise CopyRefused("the source database holds no pbm schema: nothing to copy")
    unknown = have - known_revisions()
    if unknown:
        raise CopyRefused(
            f"the source's schema ({', '.join(sorted(unknown))}) is newer than this pbm "
            f"knows ({', '.join(sorted(want))}): copy with the newer pbm"
        )
    raise CopyRefused(
        f"the source's schema is {', '.join(sorted(have))}, this pbm needs "
        f"{', '.join(sorted(want))}: run `pbm db upgrade` on the source first "
        "(with PBM_CONFIG or --config naming a configuration whose database_url is it)"
    )


def copy_database(source: Engine, target: Engine, batch: int = BATCH) -> list[Copied]:
    """Copy every table of `source` into `target` (its schema current, no rows), in one
    transaction on the target: a copy that fails leaves it empty. On PostgreSQL each
    table's id sequence is set past the largest id copied, so new rows get new ids."""
    with source.connect() as src, target.begin() as dst:
        if source.dialect.name == "postgresql":
            # One snapshot of the source for the whole copy, however long it takes.
            src.execution_options(isolation_level="REPEATABLE READ")
        filled = [t.name for t in copied_tables() if _has_rows(dst, t)]
        if filled:
            raise CopyRefused(
                f"the target database holds rows already ({', '.join(filled[:3])}"
                f"{', ...' if len(filled) > 3 else ''}): a copy goes into an empty database"
            )
        done = [_copy_table(src, dst, table, batch) for table in copied_tables()]
        if target.dialect.name == "postgresql":
            _advance_sequences(dst)
    return done


def _has_rows(conn: Connection, table: Table) -> bool:
    return conn.execute(select(text("1")).select_from(table).limit(1)).first() is not None


def _copy_table(src: Connection, dst: Connection, table: Table, batch: int) -> Copied:
    """Copy `table` batch by batch, then check that both sides hold as many rows."""
    cleared = dict.fromkeys(UNCLAIMED.get(table.name, ()))
    query = select(table).order_by(*table.primary_key.columns)
    written = 0
    for rows in _batches(src, query, batch):
        try:
            dst.execute(insert(table), [dict(row._mapping) | cleared for row in rows])
        except (sa_exc.DataError, sa_exc.IntegrityError) as exc:
            # A value the source kept and the target refuses (a text longer than its
            # column, a NUL in a text on PostgreSQL): which table, and where.
            first = rows[0]._mapping.get("id")
            reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
            raise CopyRefused(
                f"cannot copy {table.name} (the batch from id {first}): {reason}; "
                "nothing was copied"
            ) from exc
        written += len(rows)
    counted = (_count(src, table), _count(dst, table))
    if counted != (written, written):
        raise CopyRefused(
            f"{table.name}: {counted[0]} rows in the source, {written} read and "
            f"{counted[1]} in the target; nothing was copied"
        )
    return Copied(table.name, written)


def _batches(src: Connection, query: Any, batch: int) -> Iterator[list[Any]]:
    """The rows of `query` on `src`, `batch` at a time, never all in memory."""
    result = src.execute(query.execution_options(yield_per=batch))
    for part in result.partitions(batch):
        yield list(part)


def _count(conn: Connection, table: Table) -> int:
    return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def _advance_sequences(dst: Connection) -> None:
    """Set the sequence of each table's integer id past its largest id (the copied rows
    brought their ids; the sequences still start at 1)."""
    for table in copied_tables():
        column = table.autoincrement_column
        if column is None:
            continue
        top = dst.execute(select(func.max(column))).scalar()
        if top is None:
            continue  # an empty table: its sequence starts at 1, as it should
        dst.execute(
            text("SELECT setval(pg_get_serial_sequence(:table, :column), :top)"),
            {"table": table.name, "column": column.name, "top": top},
        )
