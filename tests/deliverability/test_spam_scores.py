"""Every kind of mail pbm sends, signed as the sender sends it, scores below 1.0 in
Debian's SpamAssassin with local tests only (benchmarks/spam_scores.py prints the
table; docs/deliverability.md shows it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbm.mail.dkim import DkimSigner, make_key
from tests.deliverability import spam
from tests.deliverability.mail_kinds import KINDS, make_mail
from tests.tools import missing

BOUND = 1.0

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def signer() -> DkimSigner:
    if not spam.available():
        missing("spamassassin missing: scripts/test.sh installs Debian's package")
    return DkimSigner("example.org", "pbm1", make_key())


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_scores_below_one(kind: str, signer: DkimSigner, tmp_path: Path) -> None:
    result = spam.score(signer.sign(make_mail(kind, tmp_path)))
    assert result.points < BOUND, f"{kind}: {result.points} ({result.fired()})"
    assert "HTML_MESSAGE" in dict(result.rules)  # the report was read: its HTML part seen


def test_the_scorer_sees_an_image_only_html_mail(tmp_path: Path) -> None:
    """The rule the board mails' HTML keeps clear of still fires on a mail made to hit it:
    the scorer reads what it is given."""
    if not spam.available():
        missing("spamassassin missing: scripts/test.sh installs Debian's package")
    html = '<html><body><img src="cid:x@example.org" width="500" height="400"></body></html>'
    raw = (
        "From: a@example.org\r\nTo: b@example.org\r\nSubject: hello\r\n"
        "Date: Thu, 26 Nov 2026 10:00:00 +0000\r\nMessage-ID: <t@example.org>\r\n"
        'MIME-Version: 1.0\r\nContent-Type: text/html; charset="utf-8"\r\n\r\n'
        f"{html}\r\n"
    ).encode()
    result = spam.score(raw)
    assert "HTML_IMAGE_ONLY_04" in dict(result.rules)
    assert result.points >= BOUND
