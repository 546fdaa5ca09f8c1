"""SpamAssassin's verdict on a mail: Debian's spamassassin with local tests only (-L: no
DNS blocklists, no network checks, no Bayes learned from elsewhere), its scores and the
rules that fired, read from its report."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

SPAMASSASSIN = "spamassassin"
SCORE_SECONDS = 120.0
# The report's head line and its rule lines (" 0.0 HTML_MESSAGE  BODY: HTML included").
_TOTAL = re.compile(r"Content analysis details:\s+\((-?[\d.]+) points")
_RULE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s+([A-Z0-9_]+)\s", re.MULTILINE)


@dataclass(frozen=True)
class SpamScore:
    points: float
    rules: tuple[tuple[str, float], ...]  # (rule, points), as the report lists them

    def fired(self) -> str:
        return " ".join(f"{name}={points:.1f}" for name, points in self.rules) or "-"


def available() -> bool:
    return shutil.which(SPAMASSASSIN) is not None


def score(raw: bytes) -> SpamScore:
    """`raw` scored by `spamassassin -L -t`, with a home of its own (no user prefs)."""
    with tempfile.TemporaryDirectory() as home:
        prefs = Path(home) / "user_prefs"
        prefs.write_text("")
        done = subprocess.run(
            [SPAMASSASSIN, "-L", "-t", "-p", str(prefs)],
            input=raw,
            capture_output=True,
            timeout=SCORE_SECONDS,
            env={"HOME": home, "PATH": "/usr/bin:/bin"},
        )
    report = done.stdout.decode("utf-8", "replace")
    total = _TOTAL.search(report)
    if total is None:
        raise RuntimeError(f"no SpamAssassin report: {done.stderr.decode(errors='replace')}")
    details = report[total.end() :]
    return SpamScore(
        float(total.group(1)),
        tuple((name, float(points)) for points, name in _RULE.findall(details)),
    )
