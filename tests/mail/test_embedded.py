"""The embedded default: SMTP intake on loopback, replies into the Maildir ./var/outbox/.

Needs no mail stack: this is what the README's first commands do."""

from __future__ import annotations

import json
import mailbox
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from pbm.cli import app

from .conftest import free_ports


def test_serve_with_defaults_answers_into_the_outbox_maildir(tmp_path: Path) -> None:
    (port,) = free_ports(1)
    # the defaults, except a free port instead of 2525 so parallel runs cannot collide
    config = tmp_path / "pbm.toml"
    config.write_text(f'[mail.listen]\nsmtp = "127.0.0.1:{port}"\n', encoding="utf-8")
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pbm", "--config", str(config), "serve"],
        cwd=tmp_path,
        stdout=log,
        stderr=log,
    )
    try:
        status = tmp_path / "var" / "daemon-status.json"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (
            status.exists() and json.loads(status.read_text()).get("state") == "running"
        ):
            time.sleep(0.1)
        command = ["--config", str(config), "mail", "send", "--from", "alice@example.org"]
        result = CliRunner().invoke(app, [*command, "signup alice secret"])
        assert result.exit_code == 0, result.output
        outbox = tmp_path / "var" / "outbox"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not list((outbox / "new").glob("*")):
            time.sleep(0.1)
        mails = list(mailbox.Maildir(outbox, create=False))
        assert [m["To"] for m in mails] == ["alice@example.org"]
        assert mails[0]["Subject"].startswith("Welcome")
        assert (tmp_path / "var" / "pbm.sqlite3").exists()
    finally:
        proc.terminate()
        assert proc.wait(60) == 0
        log.close()
    assert "event=stopped" in (tmp_path / "serve.log").read_text()
