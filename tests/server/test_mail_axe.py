"""HTML mails that pass an accessibility audit (issue 26, point 4): axe-core, from the
npm registry (scripts/test.sh installs it into .cache/axe when missing), run inside
headless Chromium on one mail of every kind reports no violation, and a board mail's
picture is followed by the position in words, shown, not hidden.

axe-core is added to the test copy of each page (never to the mail) with a script that
writes its findings into the page, read back with `--dump-dom` once Chromium's virtual
time has let the audit finish."""

from __future__ import annotations

import json
import re
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import Server
from tests.server.test_mail_browser import chromium_or_skip, chromium_page, resolved_page
from tests.server.test_mail_phone import every_kind_of_mail
from tests.tools import missing

AXE = Path(__file__).resolve().parents[2] / ".cache" / "axe" / "node_modules" / "axe-core"
WINDOW = (800, 1600)

AUDIT = """
<script>
axe.run(document, { resultTypes: ["violations"] }).then((results) => {
  const out = document.createElement("div");
  out.id = "audited";
  out.textContent = JSON.stringify({
    version: axe.version,
    violations: results.violations.map((v) => ({
      id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.html.slice(0, 120)),
    })),
    passes: results.passes.length,
  });
  document.body.appendChild(out);
});
</script>
"""


@pytest.fixture
def axe_script() -> str:
    script = AXE / "axe.min.js"
    if not script.exists():
        missing(f"axe-core is not installed in {AXE.parent} (scripts/test.sh installs it)")
    return script.read_text(encoding="utf-8")


def audited(raw: bytes, directory: Path, axe_script: str) -> dict[str, Any]:
    html = resolved_page(raw, directory)
    page = directory / "audit.html"
    script = f"<script>{axe_script}</script>{AUDIT}"
    page.write_text(html.replace("</body>", script + "</body>"), encoding="utf-8")
    run = chromium_page(
        chromium_or_skip(),
        directory,
        WINDOW,
        "--virtual-time-budget=30000",
        "--dump-dom",
        page.as_uri(),
    )
    return written(run.stdout, "audited")


def written(dom: bytes, name: str) -> dict[str, Any]:
    """The JSON a page's script wrote into its `<div id=NAME>`, from Chromium's dump."""
    found = re.search(rb'<div id="' + name.encode() + rb'">(.*?)</div>', dom)
    assert found, dom[-500:]
    text = found.group(1).replace(b"&quot;", b'"').replace(b"&lt;", b"<").replace(b"&gt;", b">")
    result: dict[str, Any] = json.loads(text.replace(b"&amp;", b"&"))
    return result


def test_every_kind_of_mail_passes_axe(server: Server, tmp_path: Path, axe_script: str) -> None:
    mails = every_kind_of_mail(server)
    for kind, raw in mails.items():
        directory = tmp_path / kind
        directory.mkdir()
        result = audited(raw, directory, axe_script)
        assert result["passes"] > 5, (kind, result)  # the audit ran
        assert result["violations"] == [], (kind, result["violations"])


def test_the_words_follow_the_picture(server: Server) -> None:
    mails = every_kind_of_mail(server)
    for kind in ("board-quarto", "board-quadrature"):
        msg = message_from_bytes(mails[kind], policy=policy.default)
        assert isinstance(msg, EmailMessage)
        body = msg.get_body(("html",))
        assert body is not None
        html = str(body.get_content())
        picture = html.index("<img ")
        words = html.index('<ul class="words"')
        assert picture < words < html.index('<div class="mail"')
        listing = html[words : html.index("</ul>", words)]
        assert "position:absolute" not in listing and "clip:" not in listing
        assert listing.count("<li>") >= 3
