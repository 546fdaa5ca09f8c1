"""Outside engines run apart from the server (pbm.bots.sandbox, docs/engines.md): none
of pbm's environment, a directory of their own, resource limits, standard error capped,
another user when asked, and every process they make killed with them."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pbm.bots.external import CRASH, START, ExternalEngine
from pbm.bots.sandbox import Limits, Sandbox, SandboxError, user_ids
from pbm.cli import app
from pbm.games import GAMES
from pbm.jobs import bot_task, due_bot_turns
from pbm.services.play.bots import think
from tests.bots.helpers import add_bot
from tests.server.conftest import Server

ROOT = Path(__file__).resolve().parents[2]
FAKE = [sys.executable, str(Path(__file__).with_name("fake_engine.py"))]
QUARTO = GAMES["quarto"]
MB = 1024 * 1024


def _move(engine: ExternalEngine, seconds: float = 5.0) -> Any:
    return engine.choose(QUARTO, QUARTO.new_state(), 0, level=1, seconds=seconds, seed=0)


def _facts(engine: ExternalEngine) -> dict[str, Any]:
    """The JSON line the fake engine's `report` mode wrote to its standard error."""
    line = bytes(engine.stderr.head).decode().splitlines()[0]
    facts: dict[str, Any] = json.loads(line)
    return facts


def _gone(pid: int, seconds: float = 3.0) -> bool:
    """Whether process `pid` has ended (a zombie waiting for init counts as ended)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_an_engine_sees_nothing_of_the_servers_environment_or_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PBM_TOKEN_SECRET", "token-secret-value")
    monkeypatch.setenv("IMAP_PASSWORD", "imap-password-value")
    with ExternalEngine([*FAKE, "report"]) as engine:
        assert not _move(engine).fallback
        facts = _facts(engine)
    env = facts["env"]
    assert set(env) == {"PATH", "LANG", "HOME", "TMPDIR"}
    assert "token-secret-value" not in json.dumps(env)
    assert ".venv" not in env["PATH"]
    home = Path(facts["cwd"])
    assert home != Path.cwd() and env["HOME"] == env["TMPDIR"] == str(home)
    assert facts["listing"] == []  # a fresh directory
    assert not home.exists()  # removed with the engine
    assert facts["fds"] == [0, 1, 2, 3]  # its pipes (3: the listing itself), none of pbm's


def test_an_engine_runs_under_its_limits() -> None:
    limits = Limits(cpu_seconds=7, memory_mb=900, open_files=40, file_mb=3, stderr_kb=8)
    with ExternalEngine([*FAKE, "report"], sandbox=Sandbox(limits)) as engine:
        assert not _move(engine).fallback
        facts = _facts(engine)
    assert facts["limits"] == {
        "RLIMIT_CPU": 7,
        "RLIMIT_AS": 900 * MB,
        "RLIMIT_NOFILE": 40,
        "RLIMIT_FSIZE": 3 * MB,
        "RLIMIT_CORE": 0,
    }


@pytest.mark.parametrize(
    ("mode", "size", "limits", "sign"),
    [
        ("hog", "600", Limits(memory_mb=300), "MemoryError"),
        ("bigfile", "4", Limits(file_mb=2), "File too large"),
        ("spin", "0", Limits(cpu_seconds=1), "status -24 (SIGXCPU: past its processor"),
    ],
)
def test_an_engine_past_a_limit_fails_and_the_builtin_engine_moves(
    mode: str, size: str, limits: Limits, sign: str
) -> None:
    with ExternalEngine([*FAKE, mode, size], tries=1, sandbox=Sandbox(limits)) as engine:
        reply = _move(engine, seconds=20.0)
    assert reply.fallback and [f.kind for f in reply.failures] == [CRASH]
    assert sign in str(reply.failures[0])


def test_a_flood_of_standard_error_is_read_and_capped() -> None:
    sandbox = Sandbox(Limits(stderr_kb=16))
    with ExternalEngine([*FAKE, "flood", "8"], sandbox=sandbox) as engine:
        reply = _move(engine, seconds=20.0)
        assert not reply.fallback and reply.failures == ()  # it was never blocked
        assert engine.stderr.total == 8 * MB
        assert len(engine.stderr.head) == 16 * 1024
        assert engine.stderr.dropped == 8 * MB - 16 * 1024


def test_a_child_that_left_the_engines_session_is_killed_with_it() -> None:
    with ExternalEngine([*FAKE, "spawn"]) as engine:
        assert not _move(engine).fallback
        facts = _facts(engine)
        child = facts["child"]
        assert not _gone(child, seconds=0.2)  # setsid: out of the engine's process group
        assert os.getsid(child) == child
        if "pbm-engine-" not in Path(f"/proc/{facts['pid']}/cgroup").read_text():
            os.kill(child, signal.SIGKILL)
            pytest.skip("pbm may not make a cgroup v2 here (docs/engines.md)")
    assert _gone(child)


def test_an_engine_that_closes_its_standard_error_plays_on() -> None:
    with ExternalEngine([*FAKE, "nostderr"]) as engine:
        for _ in range(3):
            reply = _move(engine)
            assert not reply.fallback and reply.failures == ()
        assert engine.stderr.total == 0


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
def test_an_engine_dies_when_pbm_is_killed() -> None:
    script = (
        "import json, sys, time\n"
        "from pbm.app import register\n"
        "from pbm.bots.external import ExternalEngine\n"
        "from pbm.games import GAMES\n"
        "register()\n"
        "q = GAMES['quarto']\n"
        f"e = ExternalEngine({[*FAKE, 'report']!r})\n"
        "e.choose(q, q.new_state(), 0, level=1, seconds=5.0, seed=0)\n"
        "print(bytes(e.stderr.head).decode().splitlines()[0], flush=True)\n"
        "time.sleep(60)\n"
    )
    pbm = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        assert pbm.stdout is not None
        facts = json.loads(pbm.stdout.readline())
        assert not _gone(facts["pid"], seconds=0.2)
    finally:
        pbm.send_signal(signal.SIGKILL)
        pbm.wait(timeout=10)
        if pbm.stdout is not None:
            pbm.stdout.close()
    assert _gone(facts["pid"])
    shutil.rmtree(facts["cwd"])  # what a killed pbm leaves behind (docs/engines.md)


def _python_for(user: str) -> str | None:
    """A Python the user may run (this one may sit in root's home, out of its reach)."""
    for python in (sys.executable, "/usr/bin/python3"):
        with contextlib.suppress(OSError):
            if subprocess.run([python, "-c", ""], user=user, timeout=30).returncode == 0:
                return python
    return None


@pytest.mark.skipif(os.geteuid() != 0, reason="running engines as another user needs root")
def test_an_engine_runs_as_the_engine_user_with_no_other_groups() -> None:
    python = _python_for("nobody")
    assert python is not None, "no Python that the user nobody may run"
    fake = [python, FAKE[1]]
    with ExternalEngine([*fake, "report"], sandbox=Sandbox(user="nobody")) as engine:
        reply = _move(engine)
        assert not reply.fallback, reply.failures
        facts = _facts(engine)
    uid, gid = user_ids("nobody")
    assert (facts["uid"], facts["gid"], facts["groups"]) == (uid, gid, [])
    assert facts["listing"] == []  # and it wrote its probe file there


def test_the_engine_user_is_refused_clearly_when_pbm_is_not_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(SandboxError, match="not as root"):
        user_ids("nobody")
    with ExternalEngine([*FAKE, "report"], sandbox=Sandbox(user="nobody"), tries=1) as engine:
        reply = _move(engine)
    assert reply.fallback and [f.kind for f in reply.failures] == [START]
    assert "engine_user" in str(reply.failures[0]) and "not as root" in str(reply.failures[0])


def test_an_unknown_engine_user_is_refused_clearly() -> None:
    if os.geteuid() != 0:
        pytest.skip("the root check comes first")
    with pytest.raises(SandboxError, match="no such user"):
        user_ids("no-such-user-here")


def test_jobs_run_refuses_an_engine_user_it_cannot_switch_to(
    cfg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pbm serve` makes the same check first (pbm.cli.bot.require_engine_user); it is
    not run here, as it would serve on when the check failed to stop it."""
    cfg.write_text(cfg.read_text() + '[bots]\nengine_user = "nobody"\n')
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    result = CliRunner().invoke(app, ["jobs", "run"])
    assert result.exit_code == 78, result.output
    assert "engine_user = 'nobody'" in result.output and "not as root" in result.output


def test_a_bots_move_is_thought_with_the_configured_sandbox(server: Server) -> None:
    config = dataclasses.replace(server.config, engine_cpu_seconds=5, engine_file_mb=1)
    alice = server.signup("alice")
    add_bot(server, "outside", engine=f"{sys.executable} {FAKE[1]} bigfile 2")
    assert server.send(alice, "quarto challenge outside alice") == "done"
    (turn,) = due_bot_turns(server.engine, server.clock, config)
    task = bot_task(server.engine, server.clock, config, turn, iterations=20)
    assert task is not None and task.sandbox == Sandbox(Limits(cpu_seconds=5, file_mb=1))
    answer = think(task)
    assert answer.fallback and "File too large" in answer.failures[0]
