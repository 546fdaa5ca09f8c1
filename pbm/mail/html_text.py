"""HTML mail bodies to plain text, keeping line structure and marking quoted parts.

Only what matters for reading commands: visible text, line breaks where the HTML
breaks lines, and `<blockquote>` content prefixed with "> " so the quote stripper
treats it like plain-text quoting.
"""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser

# Tags whose content is never shown to the reader.
_INVISIBLE = frozenset({"style", "script", "head", "title", "template", "noscript", "xml"})
# Tags that start and end a line of their own.
_BLOCK = frozenset(
    {
        "address", "article", "aside", "blockquote", "center", "dd", "div", "dl", "dt",
        "fieldset", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
        "header", "li", "main", "nav", "ol", "p", "pre", "section", "table", "tbody",
        "thead", "tfoot", "tr", "ul",
    }
)  # fmt: skip
# Void elements never get an end tag; counting them as open would break the stack.
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta"})
# What Outlook writes in its own text alternative where the HTML has a rule before
# the quoted original; the quote stripper cuts at it.
RULE_LINE = "_" * 32
# Deeper nesting is still quoted; the cap keeps hostile HTML from growing the text.
_MAX_QUOTE_PREFIX = 16
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.current = ""
        self.quote_depth = 0
        self.line_quote_depth = 0
        self.invisible_depth = 0
        self.pre_depth = 0
        self.stack: list[tuple[str, bool]] = []  # (open non-void tag, quotes), innermost last
        self.open_counts: Counter[str] = Counter()  # so stray end tags cost O(1)

    # -- line handling -------------------------------------------------------
    def _break(self) -> None:
        """End the current line (a <br>, or a block boundary with text on the line)."""
        prefix = "> " * min(self.line_quote_depth, _MAX_QUOTE_PREFIX)
        self.lines.append(prefix + self.current)
        self.current = ""
        self.line_quote_depth = self.quote_depth

    def _block_boundary(self) -> None:
        # A block holding only "&nbsp;" is how Outlook and Gmail write a blank line.
        if self.current:
            self._break()
        else:
            self.current = ""
            self.line_quote_depth = self.quote_depth

    def _add(self, text: str) -> None:
        if not self.current:
            self.line_quote_depth = self.quote_depth
        self.current += text

    # -- parser callbacks ----------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            self.invisible_depth = 0  # a <head> left open ends where the body starts
            return
        if tag in _INVISIBLE:
            self.invisible_depth += 1
            return
        if tag == "br":
            self._break()
            return
        if tag == "hr":
            self._block_boundary()
            self._add(RULE_LINE)
            self._break()
            return
        if tag in _VOID:
            return
        quotes = tag == "blockquote"
        if tag in _BLOCK:
            self._block_boundary()
            css_class = " ".join(v or "" for k, v in attrs if k in ("class", "id")).lower()
            if "signature" in css_class:
                # Gmail and Thunderbird mark signature blocks by class; cut there.
                self._add("-- ")
                self._break()
            # Webmails wrap the quoted original in a "gmail_quote"/"yahoo_quoted" block,
            # sometimes without a <blockquote> inside.
            quotes = quotes or "quote" in css_class
        if quotes:
            self.quote_depth += 1
            self.line_quote_depth = self.quote_depth
        if tag == "pre":
            self.pre_depth += 1
        elif tag in ("td", "th") and self.current and not self.current.endswith(" "):
            self._add(" ")  # cells of a row stay apart on their line
        self.stack.append((tag, quotes))
        self.open_counts[tag] += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID or tag in _BLOCK:
            self.handle_starttag(tag, attrs)
            if tag not in _VOID:
                self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _INVISIBLE:
            self.invisible_depth = max(0, self.invisible_depth - 1)
            return
        if tag in _VOID:
            return
        # Close up to the matching start tag; stray end tags are ignored.
        if not self.open_counts[tag]:
            return
        while self.stack:
            open_tag, quotes = self.stack.pop()
            self.open_counts[open_tag] -= 1
            if open_tag in _BLOCK:
                self._block_boundary()
            if quotes:
                self.quote_depth = max(0, self.quote_depth - 1)
            if open_tag == "pre":
                self.pre_depth = max(0, self.pre_depth - 1)
            if open_tag == tag:
                break
        if not self.current:
            self.line_quote_depth = self.quote_depth

    def handle_data(self, data: str) -> None:
        if self.invisible_depth:
            return
        if self.pre_depth:
            parts = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            for index, part in enumerate(parts):
                if index:
                    self._break()
                if part:
                    self._add(part)
            return
        text = _HTML_SPACE.sub(" ", data)
        if not self.current or self.current.endswith(" "):
            text = text.lstrip(" ")
        if text:
            self._add(text)

    def finish(self) -> list[str]:
        self.close()
        if self.current:
            self._break()
        return self.lines


def html_to_text(html: str) -> str:
    """Return the visible text of an HTML body, one HTML line per text line.

    Entities are unescaped, non-breaking spaces become spaces, and `<blockquote>`
    content is prefixed with "> " per nesting level.
    """
    collector = _TextCollector()
    try:
        collector.feed(html)
        lines = collector.finish()
    except Exception:  # html.parser is lenient, but a body must never break intake
        lines = [*collector.lines, collector.current]
    cleaned = [line.replace("\xa0", " ").rstrip() for line in lines]
    # Collapse runs of blank lines that empty blocks leave behind.
    result: list[str] = []
    for line in cleaned:
        if not line and (not result or not result[-1]):
            continue
        result.append(line)
    while result and not result[-1]:
        result.pop()
    return "\n".join(result)
