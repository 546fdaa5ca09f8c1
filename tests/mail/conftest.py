"""The real mail stack (Postfix -> LMTP -> Dovecot on 127.0.0.1) for the mail tests.

The session fixture runs .ci/mailstack.sh, which installs Postfix and Dovecot when they
are missing (root on Debian) and starts them from a temporary directory with mailboxes
for the server (`pbm`) and three players (`alice`, `bob`, `carol`, password `secret`), at
example.test and at xn--bcher-kva.test (bücher.test).
Tests that use it are marked `mailstack`.
"""

from __future__ import annotations

import email
import email.message
import email.policy
import imaplib
import json
import os
import shutil
import signal
import smtplib
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path

import pytest

from tests.tools import missing

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "mailstack.sh"
DOMAIN = "example.test"
# bücher.test as its A-label: carol's mail there reaches her too (one mailbox, many spellings);
# its U-label needs SMTPUTF8, which Dovecot 2.3's LMTP lacks, so the stack refuses it.
IDN_DOMAIN = "xn--bcher-kva.test"
USERS = ("pbm", "alice", "bob", "carol")
PASSWORD = "secret"
POLL_SECONDS = 0.1


def polls(seconds: float) -> int:
    """How many polls a wait of `seconds` makes at most: its loop is bound by this count
    as well as by the clock."""
    return int(seconds / POLL_SECONDS) + 1


def free_ports(n: int) -> list[int]:
    """Ports that are free right now (bound once, released); several stacks can coexist."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


@dataclass
class MailStack:
    ms: Path
    smtp_port: int
    imap_port: int
    lmtp_port: int  # Dovecot's
    pbm_lmtp_port: int  # where Postfix delivers pbm-lmtp@example.test (pbm's own listener)
    host: str = "127.0.0.1"

    @property
    def env(self) -> dict[str, str]:
        return dict(
            os.environ,
            MS=str(self.ms),
            SMTP_PORT=str(self.smtp_port),
            IMAP_PORT=str(self.imap_port),
            LMTP_PORT=str(self.lmtp_port),
            PBM_LMTP_PORT=str(self.pbm_lmtp_port),
            DOMAINS=f"{DOMAIN} {IDN_DOMAIN}",
            USERS=" ".join(USERS),
        )

    def script(self, *args: str) -> None:
        subprocess.run(["bash", str(SCRIPT), *args], env=self.env, check=True, timeout=300)

    def doveadm(self, *args: str) -> str:
        conf = self.ms / "dovecot" / "dovecot.conf"
        out = subprocess.run(
            ["doveadm", "-c", str(conf), *args], capture_output=True, check=True, timeout=30
        )
        return out.stdout.decode()

    def postfix(self, tool: str, *args: str) -> str:
        etc = self.ms / "postfix" / "etc"
        out = subprocess.run([tool, "-c", str(etc), *args], capture_output=True, timeout=30)
        return out.stdout.decode()

    def reset(self) -> None:
        """Empty every folder of every user and the Postfix queue."""
        self.postfix("postsuper", "-d", "ALL")
        for user in USERS:
            self.doveadm("expunge", "-u", user, "mailbox", "*", "all")

    def queue_size(self) -> int:
        out = self.postfix("postqueue", "-j")
        return len([line for line in out.splitlines() if line.strip()])

    # --- the players' side: plain stdlib clients --------------------------------------
    def address(self, user: str) -> str:
        return f"{user}@{DOMAIN}"

    def send(
        self,
        sender: str,
        to: str,
        subject: str,
        body: str = "",
        *,
        headers: dict[str, str] | None = None,
        message_id: str | None = None,
    ) -> str:
        """Submit a message over SMTP; returns its Message-ID."""
        msg = EmailMessage()
        msg["From"] = sender if "@" in sender else self.address(sender)
        msg["To"] = to if "@" in to else self.address(to)
        msg["Subject"] = subject
        msg["Date"] = formatdate()
        msg["Message-ID"] = message_id or make_msgid(domain=DOMAIN)
        for name, value in (headers or {}).items():
            msg[name] = value
        msg.set_content(body)
        self.send_raw(msg["From"], [msg["To"]], msg.as_bytes())
        return str(msg["Message-ID"])

    def send_raw(self, sender: str, rcpts: list[str], raw: bytes) -> None:
        with smtplib.SMTP(self.host, self.smtp_port, timeout=30) as smtp:
            smtp.sendmail(sender, rcpts, raw)

    def imap(self, user: str) -> imaplib.IMAP4:
        client = imaplib.IMAP4(self.host, self.imap_port, timeout=30)
        client.login(user, PASSWORD)
        return client

    def messages(self, user: str, folder: str = "INBOX") -> list[email.message.EmailMessage]:
        """Every message in `folder` of `user`, oldest first (read without \\Seen)."""
        client = self.imap(user)
        try:
            client.select(folder, readonly=True)
            _, data = client.uid("search", "ALL")
            uids = data[0].split() if data and data[0] else []
            out = []
            for uid in uids:
                _, parts = client.uid("fetch", uid, "(BODY.PEEK[])")
                raw = next(p[1] for p in parts if isinstance(p, tuple))
                out.append(email.message_from_bytes(raw, policy=email.policy.default))
            return out
        finally:
            client.logout()

    def count(self, user: str, folder: str = "INBOX") -> int:
        client = self.imap(user)
        try:
            _, data = client.status(folder, "(MESSAGES)")
            return int(data[0].decode().rsplit("MESSAGES", 1)[1].strip(" )"))
        finally:
            client.logout()

    def wait_count(self, user: str, n: int, folder: str = "INBOX", timeout: float = 20) -> int:
        """Poll until `user` has at least `n` messages in `folder` (bounded by `timeout`
        and by the number of polls that fit in it)."""
        deadline = time.monotonic() + timeout
        have = self.count(user, folder)
        for _ in range(polls(timeout)):
            if have >= n or time.monotonic() >= deadline:
                break
            time.sleep(POLL_SECONDS)
            have = self.count(user, folder)
        return have


def _stack_available() -> str | None:
    if shutil.which("dovecot") and shutil.which("postfix"):
        return None
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return "Postfix/Dovecot are missing and cannot be installed (needs root on Debian)"
    return None


@pytest.fixture(scope="session")
def mailstack() -> Iterator[MailStack]:
    reason = _stack_available()
    if reason:
        missing(reason)
    # not tmp_path: its parents are mode 0700, which Postfix's and Dovecot's users cannot pass
    ms = Path(tempfile.mkdtemp(prefix="pbm-mail-", dir="/tmp"))
    smtp, imap, lmtp, pbm_lmtp = free_ports(4)
    stack = MailStack(ms, smtp, imap, lmtp, pbm_lmtp)
    try:
        stack.script("start")
        yield stack
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop"], env=stack.env, check=False, timeout=120)
        shutil.rmtree(ms, ignore_errors=True)


@pytest.fixture()
def stack(mailstack: MailStack) -> MailStack:
    """The session's stack with every mailbox and the queue emptied first."""
    mailstack.reset()
    return mailstack


# --- pbm serve as a separate process, configured against the stack ---------------------


class Postbox:
    """A player's view of their IMAP inbox: every message that arrived, in order."""

    def __init__(self, stack: MailStack, user: str) -> None:
        self.stack = stack
        self.user = user
        self.mail: list[email.message.EmailMessage] = []
        self._last_uid = 0
        self._lock = threading.Lock()

    def refresh(self) -> list[email.message.EmailMessage]:
        """Fetch what arrived since the last call; returns the new messages."""
        with self._lock:
            client = self.stack.imap(self.user)
            try:
                client.select("INBOX", readonly=True)
                _, data = client.uid("search", f"UID {self._last_uid + 1}:*")
                uids = [int(u) for u in (data[0] or b"").split() if int(u) > self._last_uid]
                new = []
                for uid in sorted(uids):
                    _, parts = client.uid("fetch", str(uid), "(BODY.PEEK[])")
                    raw = next(p[1] for p in parts if isinstance(p, tuple))
                    new.append(email.message_from_bytes(raw, policy=email.policy.default))
                    self._last_uid = uid
                self.mail.extend(new)
                return new
            finally:
                client.logout()

    def wait_for(
        self, predicate: Callable[[email.message.EmailMessage], bool], n: int = 1, timeout=20.0
    ) -> list[email.message.EmailMessage]:
        """Messages matching `predicate` once there are at least `n` (or at the timeout,
        or after the polls that fit in it)."""
        deadline = time.monotonic() + timeout
        found: list[email.message.EmailMessage] = []
        for _ in range(polls(timeout)):
            self.refresh()
            found = [m for m in self.mail if predicate(m)]
            if len(found) >= n or time.monotonic() > deadline:
                break
            time.sleep(POLL_SECONDS)
        return found

    def subjects(self) -> list[str]:
        self.refresh()
        return [str(m["Subject"]) for m in self.mail]


class PbmServer:
    """`pbm serve` (`python -m pbm --config FILE serve`) on the stack; data in a temp dir.
    `extra` is appended to the file, in its [bounces] table unless it opens a table."""

    def __init__(self, stack: MailStack, workdir: Path, extra: str = "") -> None:
        self.stack = stack
        self.workdir = workdir
        self.data_dir = workdir / "var"
        (self.smtp_port,) = free_ports(1)
        self.config_path = workdir / "pbm.toml"
        self.config_path.write_text(
            f"""
[server]
address = "pbm@{DOMAIN}"
data_dir = "{self.data_dir}"

[mail]
health_seconds = 2

[mail.imap]
host = "127.0.0.1"
port = {stack.imap_port}
user = "pbm"
password = "{PASSWORD}"
ssl = false
poll_seconds = 5
reconnect_min_seconds = 0.2
reconnect_max_seconds = 2

[mail.relay]
host = "127.0.0.1"
port = {stack.smtp_port}
starttls = false
rate = 0
retry_base_seconds = 1

[mail.listen]
smtp = "127.0.0.1:{self.smtp_port}"
lmtp = "127.0.0.1:{stack.pbm_lmtp_port}"

# VERP: bounces go to pbm+ID-CODE@, which Dovecot delivers to pbm's own mailbox
[bounces]
local_part = "pbm"
{extra}
""",
            encoding="utf-8",
        )
        self.log_path = workdir / "pbm-serve.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pbm", "--config", str(self.config_path), "serve"],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            cwd=self.workdir,
        )
        log.close()
        deadline = time.monotonic() + 30
        for _ in range(polls(30)):
            if time.monotonic() >= deadline:
                break
            if self.proc.poll() is not None:
                raise RuntimeError(f"pbm serve exited: {self.log()}")
            status = self.status()
            ours = status.get("state") == "running" and status.get("pid") == self.proc.pid
            if ours and (not status.get("imap") or status["imap"].get("connected")):
                return
            time.sleep(0.1)
        raise RuntimeError(f"pbm serve did not come up: {self.log()}")

    def status(self) -> dict:
        path = self.data_dir / "daemon-status.json"
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)
        finally:
            self.proc = None

    def log(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-5000:]
        except OSError:
            return ""

    def engine(self):
        from pbm.store.engine import make_engine

        return make_engine(f"sqlite:///{self.data_dir / 'pbm.sqlite3'}")

    def rows(self, model: type) -> list:
        """The stored rows of `model`, read-only: pbm's engine begins every transaction
        IMMEDIATE (a write lock), and a poller taking that lock can starve behind a busy
        daemon; a WAL reader never waits."""
        from sqlmodel import Session, create_engine, select

        path = self.data_dir / "pbm.sqlite3"
        reader = create_engine(f"sqlite:///file:{path}?mode=ro&uri=true")
        try:
            with Session(reader, expire_on_commit=False) as session:
                return list(session.exec(select(model).order_by(model.id)))  # type: ignore[attr-defined]
        finally:
            reader.dispose()


def sign_up(server: PbmServer, *users: str) -> dict[str, Postbox]:
    """Sign `users` up by mail (password `secret`), wait for each one's welcome and
    confirm the address as its owner does: a reply to the welcome (its confirmation
    request), to its Reply-To; wait for the confirmation. Their Postboxes, by userid."""
    boxes = {u: Postbox(server.stack, u) for u in users}
    for user in users:
        server.stack.send(user, "pbm@example.test", f"signup {user} secret")
    for user, box in boxes.items():
        welcome = box.wait_for(subject_ends(f", {user}"), timeout=60)
        assert welcome, f"no welcome for {user}: {box.subjects()} {server.log()}"
        server.stack.send(
            user,
            str(welcome[0]["Reply-To"]),
            f"Re: {welcome[0]['Subject']}",
            "\n",
            headers={"In-Reply-To": str(welcome[0]["Message-ID"])},
        )
    for user, box in boxes.items():
        done = box.wait_for(
            lambda m: "is confirmed for" in " ".join(plain_text(m).split()), timeout=60
        )
        assert done, f"{user} not confirmed: {box.subjects()} {server.log()}"
        # The box holds the welcome, as before consent; the confirmation is the helper's.
        box.mail = [m for m in box.mail if m not in done]
    return boxes


def subject_ends(suffix: str) -> Callable[[email.message.EmailMessage], bool]:
    """Whether a mail's Subject ends with `suffix` (a predicate made outside any loop,
    so that it holds its own `suffix`)."""
    return lambda mail: str(mail["Subject"]).endswith(suffix)


def plain_text(mail: email.message.EmailMessage) -> str:
    """The text part of a mail pbm sent (the first part of its multipart/alternative)."""
    body = mail.get_body(preferencelist=("plain",))
    assert body is not None
    return str(body.get_content())


def wait_until(predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
    """Poll `predicate` every 0.1 s until it holds, at most `timeout` seconds and the
    number of polls that fit in them (a load test's loops are bound by both)."""
    deadline = time.monotonic() + timeout
    for _ in range(polls(timeout)):
        if time.monotonic() >= deadline:
            break
        if predicate():
            return True
        time.sleep(POLL_SECONDS)
    return predicate()


@pytest.fixture()
def pbm_server(stack: MailStack) -> Iterator[PbmServer]:
    workdir = Path(tempfile.mkdtemp(prefix="pbm-serve-", dir="/tmp"))
    server = PbmServer(stack, workdir)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
