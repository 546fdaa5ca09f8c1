"""How an outside engine's process is started and ended, apart from the server.

An engine gets nothing of pbm's: a minimal environment (PATH, LANG, and HOME and TMPDIR
set to a fresh empty directory of its own, which is also its working directory),
resource limits (CPU seconds, address space, open files, file size, no core files),
optionally another user (`Sandbox.user`, only when pbm runs as root), and no file
descriptor of pbm's but its three pipes. It is started so that every process it makes
ends with it: its own session and process group, killed as a group; on Linux a
parent-death signal (the engine is killed when the thread that started it ends, pbm
killed included); and, where pbm may make one, its own cgroup v2, killed whole, so that
even a child that left the process group with `setsid` goes. docs/engines.md says what
holds where.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import itertools
import os
import pwd
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# The engine's search path: the system's directories, none of pbm's (its virtualenv).
ENGINE_PATH = "/usr/local/bin:/usr/bin:/bin"
# prctl(2) option: the signal a process gets when the thread that started it ends.
PR_SET_PDEATHSIG = 1
# Waits for a killed engine's cgroup to empty before it is removed: 50 x 20 ms.
CGROUP_REMOVE_TRIES = 50
CGROUP_REMOVE_PAUSE = 0.02
MB = 1024 * 1024
# An engine's cgroup: pbm-engine-PID-N, below pbm's own (PID: the pbm process).
CGROUP_PREFIX = "pbm-engine-"

_cgroup_numbers = itertools.count(1)


class SandboxError(Exception):
    """An engine cannot be started as its settings ask (the text says why and what to do)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one engine process may use ([bots] engine_* settings)."""

    cpu_seconds: int = 60  # of processor time, over the life of the process
    memory_mb: int = 2048  # of address space
    open_files: int = 64
    file_mb: int = 16  # the largest file it may write
    stderr_kb: int = 64  # of its standard error kept; the rest is read and dropped


@dataclass(frozen=True, slots=True)
class Sandbox:
    """How engines are started: their limits, their user ("" for pbm's own) and whether
    each gets a cgroup of its own where pbm may make one."""

    limits: Limits = field(default_factory=Limits)
    user: str = ""
    cgroup: bool = True


def user_ids(name: str) -> tuple[int, int]:
    """The uid and gid of `name`, for running engines as that user: SandboxError when
    pbm does not run as root or there is no such user."""
    euid = os.geteuid()
    if euid != 0:
        me = _user_name(euid)
        raise SandboxError(
            f"[bots] engine_user = {name!r}: pbm runs as {me}, not as root, so it cannot "
            "start engines as another user; run pbm as root or remove engine_user"
        )
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise SandboxError(
            f"[bots] engine_user = {name!r}: there is no such user on this machine "
            f"(make one with `adduser --system --group {name}`)"
        ) from None
    if entry.pw_uid == 0:
        raise SandboxError(f"[bots] engine_user = {name!r}: that user is root; name another")
    return entry.pw_uid, entry.pw_gid


def _user_name(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def engine_environment(home: Path) -> dict[str, str]:
    """All the environment an engine gets: nothing of pbm's."""
    return {"PATH": ENGINE_PATH, "LANG": "C.UTF-8", "HOME": str(home), "TMPDIR": str(home)}


class EngineProcess:
    """A started engine: its process, directory and cgroup. `kill` ends all of it."""

    def __init__(self, argv: Sequence[str], sandbox: Sandbox) -> None:
        ids = user_ids(sandbox.user) if sandbox.user else None
        self.home = Path(tempfile.mkdtemp(prefix="pbm-engine-"))
        self.cgroup: Path | None = None
        try:
            if ids is not None:
                os.chown(self.home, *ids)
            self.cgroup = _new_cgroup() if sandbox.cgroup else None
            setup = _child_setup(self.cgroup, sandbox.limits, ids)
            self.proc: subprocess.Popen[bytes] = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.home,
                env=engine_environment(self.home),
                start_new_session=True,  # its own session and process group
                preexec_fn=setup,  # limits, user, death signal: set in the child
            )
        except BaseException:
            self._remove()
            raise

    def kill(self) -> None:
        """Kill the engine with every process it made, wait for it, remove its files."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.cgroup is not None:
            _kill_cgroup(self.cgroup)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2.0)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._remove()

    def _remove(self) -> None:
        if self.cgroup is not None:
            _remove_cgroup(self.cgroup)
            self.cgroup = None
        shutil.rmtree(self.home, ignore_errors=True)


def _limits(limits: Limits) -> list[tuple[int, int, int]]:
    """The (resource, soft, hard) limits to set, none above the hard limit now (which a
    process that is not root cannot raise). CPU: SIGXCPU at the limit, SIGKILL a second
    later."""
    wanted = [
        (resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1),
        (resource.RLIMIT_AS, limits.memory_mb * MB, limits.memory_mb * MB),
        (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
        (resource.RLIMIT_FSIZE, limits.file_mb * MB, limits.file_mb * MB),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    triples = []
    for which, soft, hard in wanted:
        now = resource.getrlimit(which)[1]
        if now != resource.RLIM_INFINITY:
            soft, hard = min(soft, now), min(hard, now)
        triples.append((which, soft, hard))
    return triples


def _child_setup(
    cgroup: Path | None, limits: Limits, ids: tuple[int, int] | None
) -> Callable[[], None]:
    """What the child does between fork and exec, in this order: join the cgroup (while
    it still may), lower its limits, drop to the engine user, then ask for the
    parent-death signal (a change of user clears it). Everything is prepared here, in
    the parent, so that the child only makes system calls."""
    parent = os.getpid()
    procs = str(cgroup / "cgroup.procs") if cgroup is not None else None
    triples = _limits(limits)
    prctl = _prctl()

    def setup() -> None:
        if procs is not None:
            fd = os.open(procs, os.O_WRONLY)
            try:
                os.write(fd, str(os.getpid()).encode())
            finally:
                os.close(fd)
        for which, soft, hard in triples:
            resource.setrlimit(which, (soft, hard))
        if ids is not None:
            os.setgroups([])
            os.setgid(ids[1])
            os.setuid(ids[0])
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:  # pbm ended before the signal was asked for
                os._exit(1)

    return setup


def _prctl() -> Callable[[int, int], int] | None:
    if sys.platform != "linux":
        return None
    try:
        function: Callable[[int, int], int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return function


# -- cgroup v2 --------------------------------------------------------------------------


def _own_cgroup() -> Path | None:
    """The directory of pbm's own cgroup in the cgroup v2 hierarchy, if one is mounted."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    own = next((line[3:] for line in lines if line.startswith("0::")), None)
    if own is None:
        return None
    for mount in mounts:
        before, _, after = mount.partition(" - ")
        fields = before.split()
        if after.split()[:1] == ["cgroup2"] and len(fields) >= 5:
            root, point = fields[3], fields[4]
            if own == root or own.startswith(root.rstrip("/") + "/"):
                return Path(point) / own[len(root) :].lstrip("/")
    return None


def _new_cgroup() -> Path | None:
    """A new empty cgroup below pbm's own, or None where pbm may not make one."""
    base = _own_cgroup()
    if base is None:
        return None
    _remove_orphans(base)
    path = base / f"{CGROUP_PREFIX}{os.getpid()}-{next(_cgroup_numbers)}"
    try:
        path.mkdir()
    except OSError:
        return None
    return path


def _remove_orphans(base: Path) -> None:
    """Remove the empty cgroups left by pbm processes that were killed (rmdir removes
    only an empty one: processes still in it are left for the admin to see)."""
    with contextlib.suppress(OSError):
        for path in base.glob(f"{CGROUP_PREFIX}*-*"):
            pid = path.name.removeprefix(CGROUP_PREFIX).partition("-")[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(OSError):
                    path.rmdir()


def _kill_cgroup(path: Path) -> None:
    """Kill every process in the cgroup: with `cgroup.kill` (Linux 5.14), else one by one
    while the cgroup is frozen, so that none can fork meanwhile."""
    kill_file = path / "cgroup.kill"
    if kill_file.exists():
        with contextlib.suppress(OSError):
            kill_file.write_text("1")
        return
    with contextlib.suppress(OSError):
        (path / "cgroup.freeze").write_text("1")
        for pid in (path / "cgroup.procs").read_text().split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
        (path / "cgroup.freeze").write_text("0")


def _remove_cgroup(path: Path) -> None:
    """Remove the cgroup once its killed processes are gone (bounded wait)."""
    for _ in range(CGROUP_REMOVE_TRIES):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                return
        _kill_cgroup(path)
        time.sleep(CGROUP_REMOVE_PAUSE)
