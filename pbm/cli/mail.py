"""`pbm mail process|retry|failed|outbox|bounces`: the message store from the shell;
`pbm mail dkim-key|doctor`: the signing key and the DNS records receivers check.

`pbm mail process < message.eml` is what an MTA's pipe delivery runs (like pbmserv's
procmail setup): exit 0 when the message is stored (whatever its commands did, and even
when they raised a bug: it is then kept as failed, for `pbm mail failed`), 75
(EX_TEMPFAIL) for anything else (the store locked, full, failing or missing its schema,
being restored by `pbm db restore`: pbm.store.restore_lock; a bad configuration, a
usage error: pbm.cli.common.pipe_usage_error), so the MTA keeps it and delivers it
again later: never a bounce.
"""

from __future__ import annotations

import json
import sys
import traceback
from dataclasses import asdict
from datetime import datetime
from email.parser import BytesHeaderParser
from email.policy import default as default_policy
from pathlib import Path
from typing import Annotated, Any

import typer

from pbm.cli.common import (
    EXIT_CONFIG,
    EXIT_REFUSED,
    EXIT_TEMPFAIL,
    EXIT_USAGE,
    JsonOption,
    config,
    emit,
    engine,
    error_line,
    exit_code_for,
    fail,
    state,
)

# Each command imports the intake, the store, the services or the DNS checks it runs
# with, so that listing the commands (`pbm mail --help`) loads none of them.


def process(
    cli: typer.Context,
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="FILE",
            help="Message files (default: stdin).",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ] = None,
    via: Annotated[
        str, typer.Option(help="How the message came in: at most 8 letters or digits.")
    ] = "pipe",
) -> None:
    """Store and process one message from stdin (or each file named).

    Exits 0 once the message is stored, 75 (EX_TEMPFAIL) when it could not be: the MTA
    keeps it and delivers it again later."""
    from pbm.clock import SystemClock
    from pbm.intake import process_message
    from pbm.store.restore_lock import held_by_intake

    # inbound_messages.via holds 8 characters (PostgreSQL refuses more: a store failure
    # on every message); 75 as for any setup error, so that the MTA keeps the mail.
    if not (via.isascii() and via.isalnum() and len(via) <= 8):
        fail(f"--via {via!r}: write at most 8 letters or digits, such as pipe", EXIT_TEMPFAIL)

    raws = [f.read_bytes() for f in files] if files else [sys.stdin.buffer.read()]
    if any(not raw.strip() for raw in raws):
        # 75 as for every failure before the message is stored: never a bounce
        fail("empty message: nothing to store", EXIT_TEMPFAIL)
    try:
        cfg = config(cli)
        # No `pbm db restore` replaces the file while this process has it open.
        with held_by_intake(cfg.database_url):
            eng = engine(cfg)
            try:
                for raw in raws:
                    status = process_message(eng, raw, via=via, clock=SystemClock(), config=cfg)
                    typer.echo(status)
            finally:
                eng.dispose()
    except Exception as exc:
        if state(cli).debug:
            raise
        if exit_code_for(exc) is not None:  # a bad configuration, the store failing
            typer.echo(f"error: {error_line(exc)}", err=True)
        else:
            # A bug before the message was stored: its traceback, and still 75, so
            # that the message waits in the MTA's queue for the fix.
            traceback.print_exc()
        raise typer.Exit(EXIT_TEMPFAIL) from None


def retry(
    cli: typer.Context,
    ids: Annotated[
        list[int] | None, typer.Argument(metavar="ID", help="Message ids (default: all).")
    ] = None,
) -> None:
    """Process failed messages again (after a fix)."""
    from pbm.clock import SystemClock
    from pbm.intake import retry_failed

    cfg = config(cli)
    eng = engine(cfg)
    try:
        results = retry_failed(eng, clock=SystemClock(), config=cfg, ids=ids)
    finally:
        eng.dispose()
    for inbound_id, status in results.items():
        typer.echo(f"{inbound_id} {status}")
    # An id that is no failed message was passed over without a word.
    unknown = [i for i in ids or () if i not in results]
    for inbound_id in unknown:
        typer.echo(
            f"error: {inbound_id} is no failed message (pbm mail failed lists them)", err=True
        )
    if not results and not ids:
        typer.echo("no failed messages")
    if unknown or any(s == "failed" for s in results.values()):
        raise typer.Exit(EXIT_REFUSED)


def failed(cli: typer.Context, as_json: JsonOption = False) -> None:
    """List messages whose processing raised a bug (or whose retries after store
    failures gave up): id, Message-ID, sender, when, and what went wrong."""
    from pbm.intake import failed_messages
    from pbm.store.engine import session_for

    eng = engine(config(cli))
    try:
        with session_for(eng) as session:
            rows = failed_messages(session)
    finally:
        eng.dispose()
    data: list[dict[str, Any]] = [
        {
            "id": r.id,
            "message_id": r.message_id,
            "sender": _sender_of(r.raw),
            "received_at": r.received_at.isoformat(),
            "failed_at": r.processed_at.isoformat() if r.processed_at else None,
            "attempts": r.attempts,
            "error": _first_line(r.error),
            "traceback": r.error or "",
        }
        for r in rows
    ]
    if not as_json and not data:
        typer.echo("no failed messages")
        return
    cells = [
        [d["id"], (d["failed_at"] or d["received_at"])[:19], d["message_id"], d["sender"]]
        for d in data
    ]
    emit(
        data,
        as_json,
        ["id", "when", "message-id", "sender", "error"],
        [[*row, d["error"]] for row, d in zip(cells, data, strict=True)],
    )


def _sender_of(raw: bytes) -> str:
    """The From header as a mail program shows it (for the admin's eyes only)."""
    try:
        headers = BytesHeaderParser(policy=default_policy).parsebytes(raw, headersonly=True)
        return " ".join(str(headers.get("From", "") or "").split())[:200]
    except Exception:  # a header so broken that even its display fails
        return "(unreadable From)"


def _first_line(error: str | None) -> str:
    """What went wrong: the first line of the stored error (its summary)."""
    lines = [line for line in (error or "").splitlines() if line.strip()]
    if not lines:
        return ""
    if lines[0].startswith("Traceback (most recent call last)"):
        return lines[-1]  # a row failed before its error had a summary line first
    return lines[0]


def outbox(
    cli: typer.Context,
    status: Annotated[str, typer.Option(help="queued, sent, failed or all.")] = "queued",
    as_json: JsonOption = False,
) -> None:
    """List outgoing mail (with --json: recipients, subject, body and the raw RFC 5322
    source of each)."""
    from pbm.services.mailing.outbox import list_outbox, recipients_of
    from pbm.store.engine import session_for
    from pbm.store.models import OutboxStatus

    known = {s.value for s in OutboxStatus}
    if status != "all" and status not in known:
        raise typer.BadParameter(
            f"{status!r}: write queued, sent, failed or all", param_hint="--status"
        )
    wanted = None if status == "all" else OutboxStatus(status)
    eng = engine(config(cli))
    try:
        with session_for(eng) as session:
            rows = list_outbox(session, wanted)
    finally:
        eng.dispose()
    data: list[dict[str, Any]] = [
        {
            "id": r.id,
            "status": r.status,
            "recipients": recipients_of(r),
            "subject": r.subject,
            "body": r.body,
            # The message as sent (RFC 5322, CRLF line ends); pbm composes it 7-bit or
            # UTF-8, so it reads as text.
            "raw": r.raw.decode("utf-8", "replace"),
            "message_id": r.message_id,
            "attempts": r.attempts,
            "created_at": r.created_at.isoformat(),
        }
        for r in rows
    ]
    emit(
        data,
        as_json,
        ["id", "status", "to", "subject"],
        [[d["id"], d["status"], ", ".join(d["recipients"]), d["subject"]] for d in data],
    )


def dkim_key(
    cli: typer.Context,
    selector: Annotated[
        str | None, typer.Option(help="The selector (default: [mail.dkim] selector, or pbm1).")
    ] = None,
    domain: Annotated[
        str | None,
        typer.Option(help="The signing domain (default: [mail.dkim] domain, or the server's)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="The key file to write (default: [mail.dkim] key_file)."),
    ] = None,
) -> None:
    """Make a 2048-bit RSA key for DKIM signing (a new file, mode 0600) and print the DNS
    TXT record that publishes it and the [mail.dkim] table that uses it."""
    from pbm.mail import dkim

    cfg = config(cli)
    dkim_cfg = cfg.dkim
    selector = selector or (dkim_cfg.selector if dkim_cfg else "pbm1")
    domain = domain or (dkim_cfg.domain if dkim_cfg else cfg.server_host)
    path = out or (dkim_cfg.key_file if dkim_cfg else None)
    if path is None:
        fail("say where to write the key: --out FILE (or set [mail.dkim] key_file)", EXIT_USAGE)
    if not dkim.SELECTOR.fullmatch(selector):
        fail(f"--selector {selector!r}: write DNS labels, such as pbm1 or 2026-11", EXIT_USAGE)
    if dkim.domain_name(domain) is None:
        fail(f"--domain {domain!r}: write a domain name, such as example.org", EXIT_USAGE)
    pem = dkim.make_key()
    try:
        dkim.write_key(path, pem)
    except FileExistsError:
        fail(f"{path} exists; a new key goes in a new file (and under a new selector)")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror}")
    typer.echo(f"wrote {path} (mode 0600)")
    typer.echo("\nPublish this DNS record:\n")
    typer.echo(dkim.dns_record(selector, domain, dkim.public_key_der(pem)))
    typer.echo("\nand sign with it in pbm's configuration:\n")
    typer.echo(f'[mail.dkim]\ndomain = "{domain}"\nselector = "{selector}"\nkey_file = "{path}"')


def mail_doctor(
    cli: typer.Context,
    domain: Annotated[
        str | None,
        typer.Argument(
            metavar="DOMAIN",
            help="The domain to check (default: [mail.dkim] domain, or the From's).",
        ),
    ] = None,
    nameserver: Annotated[
        str | None,
        typer.Option(help="Ask this DNS server, IP or IP:PORT (default: [mail] nameserver)."),
    ] = None,
    relay: Annotated[
        str | None,
        typer.Option(help="The host that sends pbm's mail (default: [mail.relay] host)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Check the DNS records receivers look at: MX, SPF (allows the relay?), the DKIM key
    (matches key_file?), DMARC (policy, aligned with the From) and the relay's PTR.
    Exit 0 when nothing fails, 1 when something does."""
    from pbm.mail import dkim, doctor

    cfg = config(cli)
    dkim_cfg = cfg.dkim
    public_key = None
    if dkim_cfg is not None:
        try:
            public_key = dkim.load_signer(dkim_cfg).public_key
        except dkim.DkimKeyError as exc:
            fail(str(exc), EXIT_CONFIG)
    setup = doctor.DomainSetup(
        domain=domain or (dkim_cfg.domain if dkim_cfg else cfg.server_host),
        from_domain=cfg.server_host,
        relay_host=relay or (cfg.relay.host if cfg.relay else None),
        dkim_domain=dkim_cfg.domain if dkim_cfg else None,
        dkim_selector=dkim_cfg.selector if dkim_cfg else None,
        dkim_public_key=public_key,
    )
    try:
        lookup = doctor.Dns(nameserver if nameserver is not None else cfg.nameserver)
    except ValueError:
        fail(f"--nameserver {nameserver!r}: write an address, IP or IP:PORT", EXIT_USAGE)
    checks = doctor.run_checks(setup, lookup)
    if as_json:
        typer.echo(
            json.dumps({"domain": setup.domain, "checks": [asdict(c) for c in checks]}, indent=2)
        )
    else:
        typer.echo(f"domain {setup.domain}, From {cfg.server_address}")
        for check in checks:
            typer.echo(f"{check.verdict:<5} {check.name:<6} {check.found}".rstrip())
            if check.problem:
                typer.echo(f"{'':12} wrong: {check.problem}")
            for line in check.publish.splitlines():
                typer.echo(f"{'':12} publish: {line}")
    if any(c.verdict is doctor.Verdict.FAIL for c in checks):
        raise typer.Exit(EXIT_REFUSED)


def bounces_command(cli: typer.Context, as_json: JsonOption = False) -> None:
    """Bounce scores and disabled or complaining mailboxes, the worst first, then the
    mails sent and spam complaints of each of the last 7 days (docs/bounces.md)."""
    from pbm.clock import SystemClock
    from pbm.services.mailing import bounces
    from pbm.store.engine import session_for

    cfg = config(cli)
    eng = engine(cfg)
    try:
        with session_for(eng) as session:
            rows = bounces.mailboxes(session)
            days = bounces.complaint_days(session, SystemClock().now())
            counts = bounces.bounce_counts(session)
            recent = [
                {
                    "at": _when(e.at),
                    "mailbox": e.mailbox,
                    "kind": e.kind.value,
                    "status": e.status,
                    "outbox_id": e.outbox_id,
                    "counted": e.counted,
                }
                for e in bounces.recent_events(session)
            ]
    finally:
        eng.dispose()
    data: dict[str, Any] = {
        "threshold": cfg.bounce_threshold,
        "mailboxes": [
            {
                "mailbox": r.mailbox,
                "score": r.score,
                "last_bounce_at": _when(r.last_bounce_at),
                "disabled_at": _when(r.disabled_at),
                "complained_at": _when(r.complained_at),
            }
            for r in rows
        ],
        "days": [
            {"day": d.day, "sent": d.sent, "complaints": d.complaints, "rate": d.rate} for d in days
        ],
        "events": counts,
        "recent": recent,
    }
    if as_json:
        emit(data, True, [], [])
        return
    # Three tables: each under its own title, a blank line between (not one run of rows).
    ever = ", ".join(f"{kind} {n}" for kind, n in counts.items()) or "none"
    typer.echo(f"bounce threshold {cfg.bounce_threshold:g}; events ever: {ever}")
    typer.echo("\nmailboxes with bounces or complaints:")
    emit(
        data["mailboxes"],
        False,
        ["mailbox", "score", "last bounce", "disabled", "complained"],
        [
            [m["mailbox"], f"{m['score']:g}", *(m[k] or "-" for k in _WHEN_KEYS)]
            for m in data["mailboxes"]
        ],
    )
    typer.echo("\nlatest bounces and complaints:")
    emit(
        recent,
        False,
        ["at", "mailbox", "kind", "status", "mail"],
        [[e["at"], e["mailbox"], e["kind"], e["status"] or "-", e["outbox_id"]] for e in recent],
    )
    typer.echo("\nmails sent and spam complaints, the last 7 days:")
    emit(
        data["days"],
        False,
        ["day", "sent", "complaints", "rate"],
        [[d.day, d.sent, d.complaints, f"{100 * d.rate:.2f} %"] for d in days],
    )


_WHEN_KEYS = ("last_bounce_at", "disabled_at", "complained_at")


def _when(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()[:19]
