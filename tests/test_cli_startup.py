"""The command line imports a command's module only when the command is looked up
(pbm.cli.lazy): `pbm --help` and `pbm mail send` load no database, services or pictures.
Each check runs in a fresh interpreter and reads its `sys.modules`; how long a start
takes is measured by benchmarks/cli_startup.py, not here."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from aiosmtpd.controller import Controller
from typer.core import TyperGroup

from pbm.cli import COMMANDS, app
from pbm.cli.lazy import Group, LazyCommands

# What `pbm --help` and a mail submission have no use for.
HEAVY = ("sqlalchemy", "sqlmodel", "PIL", "networkx", "pbm.services", "pbm.store")

PROBE = """
import json, sys
from pbm.cli import app
code = 0
try:
    app({args!r}, prog_name="pbm")
except SystemExit as end:
    code = end.code
print(json.dumps([code, sorted(sys.modules)]))
"""


def _loaded(args: list[str] | None, cwd: Path | None = None) -> set[str]:
    """The modules a fresh interpreter holds after `import pbm.cli` (and running `pbm
    ARGS` with the default configuration, which must succeed, when args is given)."""
    code = "import json, sys, pbm.cli\nprint(json.dumps([0, sorted(sys.modules)]))"
    if args is not None:
        code = PROBE.format(args=args)
    env = {k: v for k, v in os.environ.items() if k != "PBM_CONFIG"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
        cwd=cwd,
    )
    exit_code, modules = json.loads(done.stdout.splitlines()[-1])
    assert exit_code == 0, done.stdout + done.stderr
    return set(modules)


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize(
    "args", [None, ["--help"], ["mail", "--help"], ["mail", "send", "--help"]], ids=str
)
def test_starting_the_cli_loads_no_database_services_or_pictures(args: list[str] | None) -> None:
    assert _heavy(_loaded(args)) == []


class Sink:
    """An SMTP server that takes every message."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        self.messages.append(str(getattr(envelope, "content", b"")))
        return "250 OK"


def test_submitting_a_message_loads_no_database(tmp_path: Path) -> None:
    sink = Sink()
    with socket.socket() as probe:  # a port free now (aiosmtpd cannot take port 0)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        server = f"127.0.0.1:{controller.port}"
        args = ["mail", "send", "hello", "--from", "a@example.org", "--server", server]
        loaded = _loaded([*args, "--body", "hi"], cwd=tmp_path)
    finally:
        controller.stop()
    assert len(sink.messages) == 1 and "hello" in sink.messages[0]
    assert _heavy(loaded) == []


def test_a_database_command_does_load_the_database() -> None:
    # The probe can fail: a command that needs the database brings it in.
    assert "sqlmodel" in _loaded(["user", "list", "--help"])


def test_listing_the_commands_builds_none() -> None:
    commands = LazyCommands({"list": "user:list_users"})
    assert list(commands) == ["list"] and "list" in commands and len(commands) == 1
    assert "nosuch" not in commands
    with pytest.raises(KeyError):
        commands["nosuch"]


def test_every_listed_command_is_defined_with_its_help() -> None:
    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    for name, entry in COMMANDS.items():
        command = root.commands[name]
        assert command.name == name and command.help, name
        if isinstance(entry, Group):
            assert isinstance(command, TyperGroup)
            assert list(command.commands) == list(entry.commands)
            for sub in entry.commands:
                built = command.commands[sub]
                assert built.name == sub and built.help and built.callback, f"{name} {sub}"
