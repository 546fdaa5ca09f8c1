"""Reading headers of arbitrary mail without ever raising.

Messages are parsed with `policy.compat32`, which keeps every header value as the raw
text of the message: `policy.default`'s parser takes 5 to 10 times as long on the same
mails (tests/data/mail), because it builds header objects again for every structural
query. Every header is then read one way: its raw value, undecodable 8-bit bytes read
as UTF-8 else cp1252 (`clean`), unfolded, and parsed by `policy.default`'s header class
for its name (RFC 2047 words, address lists). Those classes can raise on malformed
address lists, so address reading keeps lenient fallbacks, and values longer than
`_PARSER_LIMIT` are not given to them. Strings returned never contain surrogate
escapes, so callers can store and print them safely.
"""

from __future__ import annotations

import codecs
import contextlib
import re
from email.errors import HeaderParseError
from email.header import decode_header
from email.headerregistry import AddressHeader, BaseHeader, HeaderRegistry
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
# The header classes' parser takes time and memory that grow with the square of a
# value's length (a 256 KB Subject of encoded words: 3 s and 2.4 GB), so longer values
# are left undecoded (text) or read by the lenient parser (addresses).
_PARSER_LIMIT = 4096
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")


class _HeaderClasses(HeaderRegistry):
    """`policy.default`'s header classes, each put together once.

    The stock registry builds a new class (its header class plus `BaseHeader`) for
    every header it makes, and again to look up how many a message may hold: a third of the
    time of composing a mail, and garbage for the collector. The classes it would
    build are looked up the same way (`map_to_type` still applies) and reused.
    """

    def __init__(self) -> None:
        super().__init__()
        self._built: dict[object, type[BaseHeader]] = {}

    def __getitem__(self, name: str) -> type[BaseHeader]:
        specialised = self.registry.get(name.lower(), self.default_class)
        built = self._built.get(specialised)
        if built is None:
            built = self._built[specialised] = super().__getitem__(name)
        return built


# The header factory for reading (here) and writing (compose.py, in SMTP's policy).
HEADER_CLASSES = _HeaderClasses()


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


def unguessed(text: str) -> str:
    """`text` with raw 8-bit bytes that are not UTF-8 written U+FFFD: for what pbm must
    not guess, such as the address it would answer (`clean` guesses cp1252)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def unfold(raw: str) -> str:
    """A raw header value without its folding line breaks (RFC 5322 2.2.3)."""
    return _LINE_BREAKS.sub("", raw)


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


def decode_encoded_word(word: str) -> str:
    """One RFC 2047 encoded word, decoded (unknown charsets tolerated); else `word`.

    `email.header.decode_header` splits and decodes it; the charset is applied here,
    with `decode_bytes`'s fallbacks, since an unknown one must not lose the text.
    """
    try:
        pieces = decode_header(word)
    except (HeaderParseError, ValueError):  # broken base64
        return word
    if len(pieces) != 1:
        return word
    data, charset = pieces[0]
    if not isinstance(data, bytes) or charset is None:
        return word
    return decode_bytes(data, charset.split("*", 1)[0])  # RFC 2231 language suffix


def _decoded(name: str, value: str) -> str:
    """`value` read by the header class for `name` (RFC 2047 words decoded), cleaned."""
    if len(value) <= _PARSER_LIMIT:
        # Not seen to raise for text headers (fuzzed), but never-raise is the contract:
        # the undecoded text is still the value.
        with contextlib.suppress(Exception):
            value = str(HEADER_CLASSES(name, value))
    return clean(value)  # an unknown charset in an encoded word leaves surrogate escapes


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
            values.append(_decoded(name, unfold(clean(raw))))
        return values

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
        raws = [unfold(clean(raw)) for raw in self.raw(name)]
        try:
            for value in raws:
                if len(value) > _PARSER_LIMIT:
                    raise ValueError("too long for the header classes")
                header = HEADER_CLASSES("to", value)  # whatever the name, read as a list
                if not isinstance(header, AddressHeader):  # never: "to" makes one; narrows
                    continue
                for address in header.addresses:
                    addr = address.addr_spec
                    if addr and "@" in addr:
                        pairs.append((clean(address.display_name), clean(addr).lower()))
            if pairs:
                return pairs
        except Exception:
            pairs = []
        # Fallback: the lenient compat32 address parser over the text.
        try:
            parsed = getaddresses([fold_space(value) for value in raws])
        except Exception:
            parsed = []
        for display, addr in parsed:
            addr = addr.strip().strip("<>")
            if addr and "@" in addr and " " not in addr:
                pairs.append((fold_space(_decoded("display-name", display)), addr.lower()))
        if not pairs:
            # Last resort: anything that looks like an address.
            for value in raws:
                for match in re.finditer(r"[^\s<>\"',;:()]+@[^\s<>\"',;:()]+", value):
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
