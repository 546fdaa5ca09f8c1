"""Reading headers of arbitrary mail without ever raising.

Messages are parsed with `policy.compat32`, which keeps header values as raw text
(and parses a multipart mail about 15 times faster than `policy.default`, whose feed
parser rebuilds header objects on every structural query). The headers we read are
then decoded with `policy.default`'s header classes (RFC 2047 words, address lists);
they can raise on malformed input, so every read falls back to the raw text. Strings
returned never contain surrogate escapes (undecodable 8-bit header bytes), so
callers can store and print them safely.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import contextlib
import re
from email import policy
from email.header import decode_header, make_header
from email.message import Message
from email.utils import getaddresses

_MSG_ID = re.compile(r"<([^<>\s]+)>")
# Reply/forward markers in many languages, "Re[2]:"/"Re(2):"/"Re^2:", and "[tag]" prefixes.
_SUBJECT_PREFIX = re.compile(
    r"^\s*(?:(?:re|fwd?|aw|wg|sv|vs|antw|antwort|réf|ref|tr|rv|r|odp|enc|res|ynt|vá|"
    r"trans|doorst|fs|vb|ats|atb|πρθ|на|отв|回复|回覆|答复|答覆|转发|轉寄|返信|転送|회신|답장|전달)"
    r"\s*(?:\[\d+\]|\(\d+\)|\^\d+)?\s*[:：]|\[[^\]]*\])\s*",
    re.IGNORECASE,
)
# The RFC 5322 address parser is slow on huge lists; beyond this the lenient parser runs.
_FULL_PARSER_LIMIT = 4096
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([qQbB])\?([^?\s]*)\?=")
_BETWEEN_WORDS = re.compile(r"(\?=)\s+(=\?)")
# "a@b.c", "<a@b.c>" or "Plain Name <a@b.c>": a phrase of atext words (and dots) only,
# so the angle-bracketed address is the one address every parser would find.
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_ADDR_SPEC = rf"{_ATEXT}+(?:\.{_ATEXT}+)*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*"
_SIMPLE_ADDRESS = re.compile(
    rf"^\s*(?:(?P<addr>{_ADDR_SPEC})"
    rf"|(?P<name>{_ATEXT}+(?:[ \t.]+{_ATEXT}+)*\.?)?\s*<(?P<bracketed>{_ADDR_SPEC})>)\s*$"
)


def clean(text: str) -> str:
    """Replace surrogate escapes (raw 8-bit bytes) with their UTF-8, else cp1252, reading."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    data = text.encode("utf-8", "surrogateescape")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        # Raw 8-bit headers that are not UTF-8 are nearly always Windows-1252/Latin-1.
        return data.decode("cp1252", "replace")


def strip_subject_prefixes(subject: str) -> str:
    """The subject without leading Re:/Fwd:/AW:/回复:/... markers and [list tags]."""
    previous = None
    while previous != subject:
        previous = subject
        subject = _SUBJECT_PREFIX.sub("", subject, count=1)
    return subject.strip()


def fold_space(text: str) -> str:
    """Collapse runs of whitespace (including folded header line breaks) to one space."""
    return " ".join(text.split())


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Decode with the declared charset, falling back to UTF-8, then cp1252."""
    candidates: list[str] = []
    if charset:
        with contextlib.suppress(LookupError, ValueError):
            name = codecs.lookup(charset.strip().strip('"')).name
            # Mail labelled Latin-1 is nearly always Windows-1252 (curly quotes, euro
            # sign in 0x80-0x9F), as browsers also assume; Latin-1 stays the fallback.
            candidates.extend(["cp1252", name] if name == "iso8859-1" else [name])
    candidates.append("utf-8")
    for name in candidates:
        try:
            return data.decode(name)
        except (UnicodeDecodeError, LookupError):
            continue
    # Every strict decoding failed: cp1252 covers most Western mail, with
    # replacement characters for its five undefined bytes.
    return data.decode("cp1252", "replace")


def _decode_word(match: re.Match[str]) -> str:
    charset, encoding, payload = match.group(1), match.group(2).lower(), match.group(3)
    charset = charset.split("*", 1)[0]  # RFC 2231 language suffix
    try:
        if encoding == "q":
            data = binascii.a2b_qp(payload.encode("ascii", "replace"), header=True)
        else:
            data = base64.b64decode(payload + "=" * (-len(payload) % 4))
    except (binascii.Error, ValueError):
        return match.group(0)
    return decode_bytes(data, charset)


def decode_encoded_word(word: str) -> str:
    """One RFC 2047 encoded word, decoded (unknown charsets tolerated); else `word`."""
    match = _ENCODED_WORD.fullmatch(word)
    return _decode_word(match) if match else word


def _decode_words(raw: str) -> str:
    """RFC 2047 decoding that tolerates unknown charsets and broken words."""
    try:
        return str(make_header(decode_header(raw)))
    except Exception:
        pass
    # Whitespace between two encoded words is not part of the text (RFC 2047 6.2).
    joined = _BETWEEN_WORDS.sub(r"\1\2", raw)
    return _ENCODED_WORD.sub(_decode_word, joined)


def _structured(name: str, raw: str) -> object:
    """`policy.default`'s header object for one raw value (unfolded as it does)."""
    return policy.default.header_factory(name, _LINE_BREAKS.sub("", raw))


def _simple_address(raw: str) -> tuple[str, str] | None:
    """(name, address) for the plain forms that need no full RFC 5322 parser."""
    match = _SIMPLE_ADDRESS.match(raw)
    if match is None or "=?" in raw:  # encoded words need the full decoder
        return None
    address = match.group("addr") or match.group("bracketed")
    return fold_space(match.group("name") or ""), address.lower()


class Headers:
    """The headers of one message, indexed once by lower-cased name."""

    def __init__(self, msg: Message) -> None:
        self._raw: dict[str, list[str]] = {}
        self._spelling: dict[str, str] = {}  # lower-cased name: as first written
        try:
            items = list(msg.raw_items())
        except Exception:
            items = []
        for key, value in items:
            self._raw.setdefault(str(key).lower(), []).append(str(value))
            self._spelling.setdefault(str(key).lower(), clean(str(key)))

    def names(self) -> list[str]:
        """The lower-cased names of the headers present, in order of first appearance."""
        return list(self._raw)

    def original_name(self, name: str) -> str:
        """Header `name` as the message first spelled it (for log lines and reasons)."""
        return self._spelling.get(name.lower(), name)

    def raw(self, name: str) -> list[str]:
        """The undecoded values of every header called `name` (case-insensitive)."""
        return self._raw.get(name.lower(), [])

    def values(self, name: str) -> list[str]:
        """Every value of header `name`, RFC 2047 decoded, cleaned; never raises."""
        values: list[str] = []
        for raw in self.raw(name):
            if clean(raw) != raw:
                # Undeclared 8-bit bytes: the header classes turn them into U+FFFD;
                # reading the raw text ourselves recovers UTF-8 or Latin-1 words.
                values.append(_decode_words(clean(raw)))
            elif "=?" not in raw:
                values.append(_LINE_BREAKS.sub("", raw))  # nothing to decode
            else:
                try:
                    values.append(str(_structured(name, raw)))
                except Exception:
                    values.append(_decode_words(raw))
        return [clean(value) for value in values]

    def text(self, name: str) -> str | None:
        """The first value of header `name`, decoded and whitespace-folded, or None."""
        values = self.values(name)
        return fold_space(values[0]) if values else None

    def addresses(self, name: str) -> list[tuple[str, str]]:
        """(display name, bare lower-cased address) pairs from every header `name`.

        Lenient: it guesses addresses from junk (with the CVE-2023-27043-affected
        `getaddresses` among its fallbacks), so it serves recipients and Reply-To only,
        whose results the caller validates; the sender is read by mailbox.py.
        """
        pairs: list[tuple[str, str]] = []
        raws = self.raw(name)
        try:
            for raw in raws:
                simple = _simple_address(raw)
                if simple is not None:
                    pairs.append(simple)
                    continue
                if len(raw) > _FULL_PARSER_LIMIT:
                    raise ValueError("too long for the full parser")
                header = _structured("to", raw)  # any address header class will do
                for address in header.addresses:  # type: ignore[attr-defined]
                    addr = address.addr_spec
                    if addr and "@" in addr:
                        pairs.append((clean(address.display_name), clean(addr).lower()))
            if pairs:
                return pairs
        except Exception:
            pairs = []
        # Fallback: the lenient compat32 address parser over the raw text.
        try:
            parsed = getaddresses([fold_space(raw) for raw in raws])
        except Exception:
            parsed = []
        for display, addr in parsed:
            addr = clean(addr).strip().strip("<>")
            if addr and "@" in addr and " " not in addr:
                pairs.append((fold_space(clean(_decode_words(display))), addr.lower()))
        if not pairs:
            # Last resort: anything that looks like an address.
            for raw in raws:
                for match in re.finditer(r"[^\s<>\"',;:()]+@[^\s<>\"',;:()]+", clean(raw)):
                    pairs.append(("", match.group(0).lower()))
        return pairs

    def message_ids(self, name: str) -> tuple[str, ...]:
        """Message ids (with angle brackets) from Message-ID/In-Reply-To/References."""
        found: list[str] = []
        for raw in self.raw(name):
            text = clean(raw)
            ids = _MSG_ID.findall(text)
            if not ids:
                # Some mailers drop the brackets; take bare "left@right" words.
                ids = re.findall(r"[^\s<>\"',;()]+@[^\s<>\"',;()]+", text)
            for ident in ids:
                found.append(f"<{ident}>")
        return tuple(dict.fromkeys(found))  # each once, first occurrence order
