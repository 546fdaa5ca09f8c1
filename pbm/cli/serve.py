"""`pbm serve`, and its clients `pbm mail send` (a small submission client) and
`pbm mail status`."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pbm.cli.common import EXIT_UNAVAILABLE, EXIT_USAGE, config, fail, folded
from pbm.cli.web import LogLevelOption, WebOption

if TYPE_CHECKING:
    from pbm.config import Config, Endpoint

# a status file older than this means the daemon is gone (it rewrites it every second)
STALE_SECONDS = 30


def serve_command(
    cli: typer.Context,
    log_level: LogLevelOption = "INFO",
    web: WebOption = None,
) -> None:
    """Run the mail server: intake, processing, outbox and periodic jobs, until SIGTERM."""
    from pbm.cli.bot import require_engine_user
    from pbm.cli.web import with_web
    from pbm.daemon import serve
    from pbm.logfmt import setup_logging
    from pbm.mail.settings import mail_settings

    cfg = with_web(config(cli), web)
    mail_settings(cfg)  # a password missing from the environment ends here (exit 78)
    require_engine_user(cfg)  # so does an engine_user pbm cannot switch to
    setup_logging(log_level)
    # A bad configuration, or a database that cannot be used at start, ends here with one
    # line and its exit code (pbm.cli.common.PbmGroup); once running, the daemon waits for
    # the database instead.
    serve(cfg)


def send_command(
    cli: typer.Context,
    subject: Annotated[
        str, typer.Argument(metavar="SUBJECT", help="The Subject line, e.g. 'signup alice secret'.")
    ],
    sender: Annotated[str, typer.Option("--from", help="The sender's address.")],
    to: Annotated[
        str | None, typer.Option("--to", help="Recipient (default: the server address).")
    ] = None,
    body: Annotated[
        str | None, typer.Option("--body", help="Body text (default: stdin when piped).")
    ] = None,
    server: Annotated[
        str | None,
        typer.Option("--server", help="host:port of pbm's SMTP intake (default from config)."),
    ] = None,
) -> None:
    """Submit a message to the running server's SMTP intake."""
    # loaded here, so that `pbm --help` does not (pbm.cli.lazy)
    import smtplib
    from email.message import EmailMessage
    from email.utils import formatdate, make_msgid

    from pbm.config import parse_endpoint

    for option, address in (("--from", sender), ("--to", to)):
        if address is not None and not _is_address(address):
            fail(
                f"{option}: {address!r} is not a mail address: write it as alice@example.org",
                EXIT_USAGE,
            )
    cfg = config(cli)
    try:
        endpoint = parse_endpoint(server) if server else cfg.smtp_listen
    except ValueError as exc:
        fail(f"--server: {exc}", EXIT_USAGE)
    if endpoint is None:
        fail("pbm's SMTP intake is off ([mail.listen] smtp): name one with --server", EXIT_USAGE)
    if body is None:
        body = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to or cfg.server_address
    msg["Subject"] = subject
    msg["Date"] = formatdate(localtime=False)
    msg["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or "localhost")
    msg.set_content(body or "")
    try:
        with smtplib.SMTP(endpoint.host, endpoint.port, timeout=30) as smtp:
            smtp.send_message(msg)
    except (OSError, smtplib.SMTPException) as exc:
        fail(f"cannot submit to {endpoint}: {exc}; {_serve_hint(cfg, endpoint)}", EXIT_UNAVAILABLE)
    typer.echo(f"sent {msg['Message-ID']} to {msg['To']} via {endpoint}")


def _is_address(text: str) -> bool:
    """Whether `text` is an address (`alice@example.org`, or with a display name): one
    that is not made a message no intake would take as it was meant."""
    from email.utils import parseaddr

    local, _, domain = parseaddr(text)[1].rpartition("@")
    return bool(local and domain) and not any(c.isspace() for c in local + domain)


def _serve_hint(cfg: Config, endpoint: Endpoint) -> str:
    """What the status file says about the daemon `pbm mail send` could not reach."""
    from pbm.daemon import status_path

    status = _read_status(status_path(cfg))
    if not _running(status):
        return "pbm serve is not running: start it (`pbm serve`, or `bash scripts/run.sh`)"
    listening = (status.get("listen") or {}).get("smtp")
    if listening and listening != str(endpoint):
        return f"pbm serve runs (pid {status['pid']}) but listens on {listening}: use --server"
    return f"pbm serve runs (pid {status['pid']}) but does not answer there: see `pbm mail status`"


def _read_status(path: Path) -> dict[str, Any]:
    """The daemon's status file; a file there that cannot be read or parsed as {"unreadable":
    why}, so that status does not call it missing."""
    if not path.exists():
        return {}
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        return {"unreadable": exc.strerror or str(exc)}
    except ValueError as exc:  # JSON, or UTF-8, broken (a full disk, a hand edit)
        return {"unreadable": f"not JSON: {exc}"}
    return found if isinstance(found, dict) else {"unreadable": "not a JSON object"}


def status_command(
    cli: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw status as JSON.")] = False,
) -> None:
    """Show whether `pbm serve` runs, its counters and the database's message counts.

    Exits 0 when the daemon runs, 3 when it does not."""
    from pbm.daemon import status_path

    cfg = config(cli)
    path = status_path(cfg)
    status = _read_status(path)
    running = _running(status)
    status["running"] = running
    status["database"] = _db_counts(cfg)
    status["daemons"] = _db_daemons(cfg)
    if as_json:
        typer.echo(json.dumps(status, indent=2))
    else:
        _print_status(status, path)
    raise typer.Exit(0 if running else 3)


def _running(status: dict[str, Any]) -> bool:
    if status.get("state") != "running" or not isinstance(status.get("pid"), int):
        return False
    try:
        os.kill(status["pid"], 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    try:
        updated = datetime.fromisoformat(status["updated_at"])
    except (KeyError, TypeError, ValueError):
        return False
    return (datetime.now(UTC) - updated).total_seconds() < STALE_SECONDS


def _db_counts(cfg: Config) -> dict[str, dict[str, int]] | str:
    from pbm.clock import SystemClock
    from pbm.mailstore import DbInbox
    from pbm.store.engine import make_engine, sqlite_file
    from pbm.store.failures import describe_failure

    path = sqlite_file(cfg.database_url)
    if path is not None and not path.exists():
        # Looking makes nothing: a database missing under a running daemon stays missing
        # (the daemon refuses mail until it is back), and a first run is not one.
        return f"unavailable: no database file at {path}"
    engine = make_engine(cfg.database_url, create=False, busy_timeout=cfg.busy_timeout_seconds)
    try:
        return DbInbox(engine, SystemClock(), cfg).counts()
    except Exception as exc:  # a missing or locked database is part of what status reports
        return f"unavailable: {describe_failure(exc)}"
    finally:
        engine.dispose()


def _db_daemons(cfg: Config) -> list[dict[str, Any]] | str:
    """Every daemon the database knows (the cluster: several on PostgreSQL), whether it
    is running, stopped or gone (silent past its lease, its work released), and the
    messages and mails it holds."""
    from pbm.clock import SystemClock
    from pbm.store import claims
    from pbm.store.engine import make_engine, session_for, sqlite_file
    from pbm.store.failures import describe_failure

    path = sqlite_file(cfg.database_url)
    if path is not None and not path.exists():
        return f"unavailable: no database file at {path}"
    engine = make_engine(cfg.database_url, create=False, busy_timeout=cfg.busy_timeout_seconds)
    try:
        with session_for(engine) as session:
            found = claims.daemons(session, SystemClock().now())
    except Exception as exc:  # an old schema or a missing database: status still reports
        return f"unavailable: {describe_failure(exc)}"
    finally:
        engine.dispose()
    return [
        {
            "id": d.id,
            "host": d.host,
            "pid": d.pid,
            "state": d.state,
            "started_at": d.started_at.isoformat(timespec="seconds"),
            "last_seen": d.last_seen.isoformat(timespec="seconds"),
            "listen": d.listen,
            "holds_messages": d.messages,
            "holds_mails": d.mails,
            "counters": d.counters,
        }
        for d in found
    ]


def _print_daemons(daemons: list[dict[str, Any]] | str) -> None:
    if isinstance(daemons, str):
        typer.echo(f"  daemons: {daemons}")
        return
    shown = [d for d in daemons if d["state"] != "stopped"]
    if shown:
        typer.echo("daemons (the cluster):")
    for d in shown:
        # one daemon's line is some 130 columns: folded to the terminal, as the rest
        typer.echo(
            folded(
                f"#{d['id']} {d['host']} pid {d['pid']}: {d['state']}, last seen "
                f"{d['last_seen']}, holds {d['holds_messages']} messages and "
                f"{d['holds_mails']} mails; processed {d['counters'].get('processed', 0)}, "
                f"sent {d['counters'].get('sent', 0)}"
                + (f" ({d['listen']})" if d["listen"] else ""),
                indent="  ",
                hang="    ",
            )
        )


def _print_status(status: dict[str, Any], path: Path) -> None:
    if status["running"]:
        typer.echo(f"pbm serve: running (pid {status['pid']}, since {status['started_at']})")
    elif "state" in status:
        typer.echo(f"pbm serve: not running (last status {status.get('updated_at')}, {path})")
    elif "unreadable" in status:
        typer.echo(f"pbm serve: unknown (status file {path} unreadable: {status['unreadable']})")
    else:
        typer.echo(f"pbm serve: not running (no status file {path})")
    listen = status.get("listen") or {}
    for name in ("smtp", "lmtp"):
        if listen.get(name):
            typer.echo(f"  {name} intake: {listen[name]}")
    imap = status.get("imap")
    if imap:
        state = "connected" if imap.get("connected") else "disconnected"
        typer.echo(f"  imap intake: {imap.get('host')} {state}, {imap.get('stored')} stored")
        if imap.get("last_error"):
            typer.echo(f"    last error: {imap['last_error']}")
    if status.get("outgoing"):
        typer.echo(f"  outgoing: {status['outgoing']}")
    if status["running"] and status.get("store_problem"):
        # the database file is gone or replaced: mail waits (451) until it is back
        typer.echo(f"  store: the database file is {status['store_problem']}; mail waits")
    for key, value in (status.get("counters") or {}).items():
        typer.echo(f"  {key}: {value}")
    db = status["database"]
    if isinstance(db, str):
        typer.echo(f"  database: {db}")
        return
    for table in ("inbound", "outbox"):
        counts = db.get(table, {})
        text = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "empty"
        typer.echo(f"  {table} messages: {text}")
    _print_daemons(status.get("daemons", []))
