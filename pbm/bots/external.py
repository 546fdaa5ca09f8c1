"""Outside engines: a program that speaks pbm's engine protocol on stdin and stdout.

The protocol (docs/engines.md, in the spirit of GTP and UCI) is lines of text. pbm
starts the program and sends `pbm-engine 1`; the engine answers `ready [NAME]`. For each
move pbm sends the game, its options, the engine's seat, the position as the game's
one-line `dump` text, the moves so far and `go SECONDS`; the engine answers `bestmove
MOVE` in the game's notation, or `resign`. What the engine's seat may not see is
redacted exactly as for the built-in engine (Quadrupel's blind setups).

A broken engine harms no game: a crash, a timeout, an unparsable or an illegal answer is
recorded as a `Failure`, the program is killed and started again for the next try, and
after `tries` failures the move comes from the built-in engine at the bot's level.

The program runs apart from the server (pbm.bots.sandbox): its own environment,
directory, limits and, if set, user; its standard error is read as it comes and kept up
to a bound.
"""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import shlex
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType

from pbm.bots.engine import DRAWN, LOST, UNCLEAR, WON, Decision, choose, tactics_for
from pbm.bots.sandbox import EngineProcess, Sandbox, SandboxError
from pbm.games import AnyGame, GameError, IllegalMoveError
from pbm.games.base import Move, State

PROTOCOL = "pbm-engine 1"
VERDICTS = (WON, LOST, DRAWN, UNCLEAR)
# Failure kinds.
START, CRASH, TIMEOUT, GARBAGE, ILLEGAL = "start", "crash", "timeout", "garbage", "illegal"
# A line longer than this is garbage (an engine stuck printing).
MAX_LINE = 65536
# Kept of the end of the engine's stderr for a failure record.
STDERR_TAIL = 400
# Of the head of an engine's stderr, this much goes into pbm's log when it ends.
STDERR_LOGGED = 2000

# Signals that end an engine past one of its limits (pbm.bots.sandbox), as the admin reads them.
PAST_LIMIT: dict[int, str] = {
    signal.SIGXCPU: "SIGXCPU: past its processor time, [bots] engine_cpu_seconds",
    signal.SIGXFSZ: "SIGXFSZ: past its file size, [bots] engine_file_mb",
}

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed try: what went wrong, in a line the admin can read."""

    kind: str  # START, CRASH, TIMEOUT, GARBAGE or ILLEGAL
    detail: str
    stderr: str = ""  # the end of what the engine wrote to stderr

    def __str__(self) -> str:
        text = f"{self.kind}: {self.detail}"
        return f"{text} (stderr: {self.stderr})" if self.stderr else text


@dataclass(frozen=True, slots=True)
class EngineDecision:
    """The move for the bot, where it came from, and what failed on the way."""

    decision: Decision
    fallback: bool  # True when the built-in engine chose the move
    failures: tuple[Failure, ...]
    engine_name: str = ""


class StderrLog:
    """An engine's standard error as it is read: the first `limit` bytes kept, the rest
    dropped and counted, and the last STDERR_TAIL bytes of all of it for failures."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head = bytearray()
        self.total = 0
        self._tail = b""

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
        self._tail = (self._tail + chunk)[-STDERR_TAIL:]

    @property
    def dropped(self) -> int:
        return self.total - len(self.head)

    def tail(self) -> str:
        text = self._tail.decode("utf-8", "replace")
        return " / ".join(line.strip() for line in text.splitlines() if line.strip())


class _Failed(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(str(failure))
        self.failure = failure


class ExternalEngine:
    """One outside engine program, started on first use and kept between moves.

    `command` is the command line (a string split like a shell, or a list). `tries` is
    how many failures a move may meet before the built-in engine plays it;
    `start_seconds` bounds the wait for `ready`; an answer to `go S` may take S plus
    `grace` seconds (the 10 % of slack a built-in bot gets, at least 0.2 s). `sandbox`
    says how the program is kept apart from the server (pbm.bots.sandbox).
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        tries: int = 3,
        start_seconds: float = 10.0,
        grace: float = 0.1,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ValueError("an engine command is needed")
        self.tries = tries
        self.start_seconds = start_seconds
        self.grace = grace
        self.sandbox = sandbox or Sandbox()
        self.name = ""
        self._process: EngineProcess | None = None
        self.stderr = StderrLog(self.sandbox.limits.stderr_kb * 1024)
        self._buffer = b""

    @property
    def _proc(self) -> subprocess.Popen[bytes] | None:
        return None if self._process is None else self._process.proc

    # -- the public call -----------------------------------------------------------
    def choose(
        self,
        game: AnyGame,
        state: State,
        seat: int,
        *,
        level: int,
        seconds: float,
        seed: int,
        moves: Sequence[str] = (),
        iterations: int | None = None,
    ) -> EngineDecision:
        """The engine's move for `seat` in `state`, or the built-in engine's after
        `tries` failures. `moves` are the texts of the moves played since the game's
        start position (as recorded); those `seat` may not see are sent as `?`."""
        if game.to_move(state) != seat:
            raise ValueError(f"seat {seat} is not to move")
        failures: list[Failure] = []
        request = self._request(game, state, seat, moves, seconds)
        for _ in range(self.tries):
            started = time.perf_counter()
            try:
                verdict, text = self._ask(request, seconds)
                decision = self._decision(game, state, text, verdict, level, started)
            except _Failed as failed:
                failures.append(failed.failure)
                self._kill()
                continue
            return EngineDecision(decision, False, tuple(failures), self.name)
        decision = choose(
            game, state, seat, level=level, seconds=seconds, seed=seed, iterations=iterations
        )
        return EngineDecision(decision, True, tuple(failures), self.name)

    def close(self) -> None:
        """Ask the engine to quit, then make sure it is gone."""
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(OSError):
                self._send(["quit"])
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=1.0)
        self._kill()

    def __enter__(self) -> ExternalEngine:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- the request ---------------------------------------------------------------
    def _request(
        self, game: AnyGame, state: State, seat: int, moves: Sequence[str], seconds: float
    ) -> list[str]:
        view = tactics_for(game).redact(state, seat)
        lines = [f"game {game.name}"]
        for name, value in game.state_options(state).items():
            lines.append(f"option {name}={_option_text(value)}")
        lines.append(f"seat {seat} {game.seat_name(seat)}")
        lines.append(f"position {game.dump(view)}")
        shown = _visible_moves(game, state, seat, moves)
        lines.append(f"moves {len(shown)}")
        lines += [f"move {text}" for text in shown]
        lines.append(f"go {seconds:.3f}")
        return lines

    def _decision(
        self,
        game: AnyGame,
        state: State,
        text: str | None,
        verdict: str,
        level: int,
        started: float,
    ) -> Decision:
        elapsed = time.perf_counter() - started
        value = {WON: 1.0, LOST: 0.0, DRAWN: 0.5}.get(verdict, 0.5)
        if text is None:
            return Decision(None, "resign", verdict, value, level, 0, elapsed)
        try:
            move: Move = game.parse_move(state, text)
        except GameError as exc:
            kind = ILLEGAL if isinstance(exc, IllegalMoveError) else GARBAGE
            raise _Failed(Failure(kind, str(exc), self._stderr_tail())) from None
        canonical = game.format_move(state, move)
        return Decision(move, canonical, verdict, value, level, 0, elapsed)

    # -- talking to the process ----------------------------------------------------
    def _ask(self, request: list[str], seconds: float) -> tuple[str, str | None]:
        """Send a request and read the answer: (verdict, move text or None to resign)."""
        self._ensure_started()
        self._send(request)
        deadline = time.perf_counter() + seconds + max(self.grace * seconds, 0.2)
        verdict = UNCLEAR
        while True:
            line = self._read_line(deadline)
            word, _, rest = line.partition(" ")
            rest = rest.strip()
            if not line or word in ("info", "#") or line.startswith("#"):
                continue
            if word == "verdict" and rest in VERDICTS:
                verdict = rest
            elif word == "bestmove" and rest:
                return verdict, rest
            elif line == "resign":
                return verdict, None
            else:
                raise _Failed(Failure(GARBAGE, f"unexpected answer {line[:200]!r}"))

    def _ensure_started(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return
        self._kill()
        self.stderr = StderrLog(self.sandbox.limits.stderr_kb * 1024)
        try:
            self._process = EngineProcess(self.argv, self.sandbox)
        except SandboxError as exc:
            raise _Failed(Failure(START, str(exc))) from None
        except (OSError, subprocess.SubprocessError) as exc:
            raise _Failed(Failure(START, f"cannot run {self.argv[0]!r}: {exc}")) from None
        self._buffer = b""
        self._send([PROTOCOL])
        deadline = time.perf_counter() + self.start_seconds
        while True:
            line = self._read_line(deadline)
            if line == "ready" or line.startswith("ready "):
                self.name = line[len("ready") :].strip()
                return
            if line and not line.startswith(("info", "#")):
                raise _Failed(Failure(START, f"expected 'ready', got {line[:200]!r}"))

    def _send(self, lines: list[str]) -> None:
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        try:
            proc.stdin.write(("\n".join(lines) + "\n").encode())
            proc.stdin.flush()
        except OSError:  # BrokenPipeError: it exited
            raise _Failed(self._crash_failure()) from None

    def _read_line(self, deadline: float) -> str:
        """The next line of standard output, reading standard error meanwhile (so an
        engine never blocks on a full pipe of it)."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None and proc.stderr is not None
        out = proc.stdout.fileno()
        err = None if proc.stderr.closed else proc.stderr.fileno()  # closed at its end
        with selectors.DefaultSelector() as selector:
            selector.register(out, selectors.EVENT_READ)
            if err is not None:
                selector.register(err, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                if len(self._buffer) > MAX_LINE:
                    raise _Failed(Failure(GARBAGE, "an answer line longer than 64 KiB"))
                left = deadline - time.perf_counter()
                ready = selector.select(left) if left > 0 else []
                if not ready:
                    raise _Failed(Failure(TIMEOUT, "no answer in time", self._stderr_tail()))
                for key, _ in ready:
                    if key.fd == err:
                        self._read_stderr(selector)
                        continue
                    chunk = os.read(out, 65536)
                    if not chunk:
                        raise _Failed(self._crash_failure())
                    self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        self._drain_stderr()
        return line.decode("utf-8", "replace").strip()

    def _read_stderr(self, selector: selectors.BaseSelector) -> None:
        proc = self._proc
        assert proc is not None and proc.stderr is not None
        chunk = os.read(proc.stderr.fileno(), 65536)
        if chunk:
            self.stderr.add(chunk)
        else:  # the engine closed it
            selector.unregister(proc.stderr.fileno())
            proc.stderr.close()

    def _drain_stderr(self) -> None:
        """Read what standard error holds now, without waiting."""
        proc = self._proc
        if proc is None or proc.stderr is None or proc.stderr.closed:
            return
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stderr.fileno(), selectors.EVENT_READ)
            # Bounded: an engine writing without pause must not hold pbm here.
            for _ in range(64):
                if proc.stderr.closed or not selector.select(0):
                    return
                self._read_stderr(selector)

    def _crash_failure(self) -> Failure:
        proc = self._proc
        code = None
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = proc.wait(timeout=1.0)
        detail = "the engine exited" + (f" with status {code}" if code is not None else "")
        if code is not None and -code in PAST_LIMIT:
            detail += f" ({PAST_LIMIT[-code]})"
        return Failure(CRASH, detail, self._stderr_tail())

    def _stderr_tail(self) -> str:
        self._drain_stderr()
        return self.stderr.tail()

    def _kill(self) -> None:
        if self._process is None:
            return
        self._drain_stderr()
        process, self._process = self._process, None
        process.kill()
        self._buffer = b""
        head = bytes(self.stderr.head[:STDERR_LOGGED]).decode("utf-8", "replace")
        if self.stderr.dropped:
            log.warning(
                "engine %s wrote %d bytes to stderr; %d past the first %d were dropped. "
                "It began: %s",
                self.argv[0],
                self.stderr.total,
                self.stderr.dropped,
                self.stderr.limit,
                head,
            )
        elif head.strip():
            log.debug("engine %s stderr: %s", self.argv[0], head)


def _option_text(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value).replace(" ", "")


def _visible_moves(game: AnyGame, state: State, seat: int, moves: Sequence[str]) -> list[str]:
    """The move texts, with those `seat` may not see replaced by `?`. They are replayed
    from the game's start position to learn who played each; if they do not lead to
    `state` (a game imported from a position), no moves are sent."""
    now = game.new_state(**game.state_options(state))
    played: list[tuple[Move, int]] = []
    try:
        for text in moves:
            mover = game.to_move(now)
            if mover is None:
                return []
            move = game.parse_move(now, text)
            played.append((move, mover))
            now = game.apply(now, move)
    except GameError:
        return []
    if game.dump(now) != game.dump(state):
        return []
    return [
        text if game.move_visible(state, move, mover, seat) else "?"
        for text, (move, mover) in zip(moves, played, strict=True)
    ]
