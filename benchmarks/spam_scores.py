"""SpamAssassin's score of every kind of mail pbm sends (issue 23): one mail of each,
made through the real pipeline (tests/deliverability/mail_kinds.py), its HTML part
added and DKIM-signed as the sender does, scored by Debian's spamassassin with local
tests only (-L). Prints kind, score and the rules that fired; every kind should stay
below 1.0.

    .venv/bin/python benchmarks/spam_scores.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pbm.app import register
from pbm.mail.dkim import DkimSigner, make_key
from tests.deliverability import spam
from tests.deliverability.mail_kinds import KINDS, make_mail

BOUND = 1.0


def main() -> int:
    if not spam.available():
        print("spamassassin is missing: scripts/test.sh installs Debian's package")
        return 2
    signer = DkimSigner("example.org", "pbm1", make_key())
    print(f"{'kind':<19} {'score':>5}  rules that fired")
    worst = 0.0
    for kind in KINDS:
        with tempfile.TemporaryDirectory() as directory:
            raw = signer.sign(make_mail(kind, Path(directory)))
        result = spam.score(raw)
        worst = max(worst, result.points)
        print(f"{kind:<19} {result.points:>5.1f}  {result.fired()}")
    print(f"highest {worst:.1f} (bound {BOUND})")
    return 0 if worst < BOUND else 1


if __name__ == "__main__":
    register()  # the games, commands and game-end handlers (pbm.app)
    sys.exit(main())
