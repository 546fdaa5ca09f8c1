"""Strict reading of one mailbox: the From header is exactly one address, or nobody.

Python 3.11.7's `email.utils.parseaddr`/`getaddresses`, and the `policy.default`
header parser too, read `alice@a.test <attacker@evil.test>` as alice@a.test, while
mail programs and DMARC read attacker@evil.test (CVE-2023-27043 and its relatives).
A header that two readers can take for different addresses must authenticate
nobody, so this module implements the RFC 5322 section 3.4 mailbox grammar itself
(with RFC 6532 UTF-8 and RFC 2047 encoded words in the display name) and refuses
everything else with a reason. See docs/mail-format.md, "The sender".
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pbm.mail.headers import decode_encoded_word, unfold

_MAX_HEADER = 4096
_MAX_LOCAL_BYTES = 64  # RFC 5321 4.5.3.1.1
_MAX_DOMAIN_BYTES = 253  # a DNS name, without its final dot
_MAX_ADDRESS_BYTES = 254  # RFC 5321 path limit less the angle brackets
_ATEXT_ASCII = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/=?^_`{|}~"
)
_SPECIALS = frozenset('<>@,;:.[]"()\\')
_ENCODED_WORD = re.compile(r"^=\?[^?\s]+\?[qQbB]\?[^?\s]*\?=$")
# What some decoders take for an encoded word even where RFC 2047 allows none (across
# a "." of the phrase, glued to other text).
_LOOSE_ENCODED_WORD = re.compile(r"=\?[^?\s]+\?[qQbB]\?[^?\s]*\?=")
# Characters that may never be part of an address: controls, format characters
# (bidi overrides, zero-width joiners), separators, surrogates, private use, unassigned
# code points, and U+FFFD (bytes no charset could read).
_NOT_IN_ADDRESS = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})


class AddressError(ValueError):
    """Why a header is not exactly one valid address; `str()` is the reason."""


@dataclass(frozen=True)
class Mailbox:
    """One address: its decoded display name and its bare, lower-cased addr-spec."""

    name: str
    address: str


@dataclass(frozen=True)
class _Token:
    kind: str  # "atom", "quoted", or the special character itself
    text: str
    gap: bool  # whitespace or a comment came before it


def _is_control(char: str) -> bool:
    return unicodedata.category(char) == "Cc"


def _atom_char(char: str) -> bool:
    if char in _ATEXT_ASCII:
        return True
    # RFC 6532: any non-ASCII character is atext; controls are refused separately.
    return ord(char) > 127 and not char.isspace() and not _is_control(char)


def _bracketed(text: str, start: int, close: str, name: str) -> tuple[str, int]:
    """The content of a quoted string or comment starting at `start`, and the end index.

    Quoted pairs are resolved; comments nest. A control character anywhere, even
    escaped, refuses the header.
    """
    depth = 1
    out: list[str] = []
    i = start + 1
    while i < len(text):
        char = text[i]
        if char == "\\":
            if i + 1 >= len(text):
                break
            char = text[i + 1]
            if _is_control(char):
                raise AddressError(f"control character in a {name}")
            out.append(char)
            i += 2
            continue
        if _is_control(char) and char != "\t":
            raise AddressError(f"control character in a {name}")
        if close == ")" and char == "(":
            depth += 1
        elif char == close:
            depth -= 1
            if depth == 0:
                return "".join(out), i + 1
        out.append(char)
        i += 1
    raise AddressError(f"unterminated {name}")


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    gap = False
    i = 0
    while i < len(text):
        char = text[i]
        if char in " \t":
            gap = True
            i += 1
        elif char == "(":
            comment, i = _bracketed(text, i, ")", "comment")
            if any(c in comment for c in "@<>"):
                # Comments are not addresses, but careless readers show them as one.
                raise AddressError("a comment that looks like an address")
            gap = True
        elif char == '"':
            content, i = _bracketed(text, i, '"', "quoted string")
            tokens.append(_Token("quoted", content, gap))
            gap = False
        elif char == "\\" or char == ")":
            raise AddressError(f"stray {char!r}")
        elif char in _SPECIALS:
            tokens.append(_Token(char, char, gap))
            gap = False
            i += 1
        elif _atom_char(char):
            end = i
            while end < len(text) and _atom_char(text[end]):
                end += 1
            tokens.append(_Token("atom", text[i:end], gap))
            gap = False
            i = end
        else:
            raise AddressError(f"unexpected character {char!r}")
    return tokens


def _check_chars(text: str, where: str) -> None:
    for char in text:
        if char == "\ufffd":
            # Bytes no charset could read (headers.unguessed): any reading is a guess.
            raise AddressError(f"bytes that are not UTF-8 in the {where} (U+FFFD)")
        if unicodedata.category(char) in _NOT_IN_ADDRESS:
            raise AddressError(f"character {char!r} in the {where}")


def _domain_label_ok(label: str) -> bool:
    if not 1 <= len(label.encode("utf-8")) <= 63:
        return False
    for char in label:
        if char.isascii():
            if not (char.isalnum() or char == "-"):
                return False
        elif unicodedata.category(char)[0] not in "LMN":  # IDN labels: letters, marks, digits
            return False
    return True


def _addr_spec(tokens: list[_Token]) -> str:
    """The bare lower-cased address of addr-spec tokens (no spaces or comments inside)."""
    if not tokens:
        raise AddressError("empty address")
    if any(token.gap for token in tokens[1:]):
        raise AddressError("space or comment inside the address")
    ats = [n for n, token in enumerate(tokens) if token.kind == "@"]
    if len(ats) != 1:
        raise AddressError("no '@'" if not ats else "more than one '@'")
    local_tokens, domain_tokens = tokens[: ats[0]], tokens[ats[0] + 1 :]
    if len(local_tokens) == 1 and local_tokens[0].kind == "quoted":
        content = local_tokens[0].text
        if not content:
            raise AddressError("empty quoted local part")
        _check_chars(content.replace(" ", ""), "local part")
        if all(part and all(map(_atom_char, part)) for part in content.split(".")):
            local = content  # "alice"@a.test is alice@a.test
        else:
            local = '"' + content.replace("\\", "\\\\").replace('"', '\\"') + '"'
    elif _is_dot_atom(local_tokens):
        local = "".join(token.text for token in local_tokens)
        _check_chars(local, "local part")
        if "=?" in local:
            # RFC 2047 forbids encoded words here; some programs decode them anyway.
            raise AddressError("an encoded word in the address")
    else:
        raise AddressError("local part is neither a dot-atom nor a quoted string")
    if any(token.kind == "[" for token in domain_tokens):
        raise AddressError("domain literal")
    if not _is_dot_atom(domain_tokens):
        raise AddressError("bad domain")
    domain = "".join(token.text for token in domain_tokens)
    _check_chars(domain, "domain")
    labels = domain.split(".")
    if not all(_domain_label_ok(label) for label in labels):
        raise AddressError(f"bad domain {domain!r}")
    if len(local.encode("utf-8")) > _MAX_LOCAL_BYTES:
        raise AddressError("local part longer than 64 octets")
    if len(domain.encode("utf-8")) > _MAX_DOMAIN_BYTES:
        raise AddressError("domain longer than 253 octets")
    address = f"{local}@{domain}"
    if len(address.encode("utf-8")) > _MAX_ADDRESS_BYTES:
        raise AddressError("address longer than 254 octets")
    return address.lower()


def _is_dot_atom(tokens: list[_Token]) -> bool:
    """atom *("." atom), the tokens alternating with no empty parts."""
    if not tokens or len(tokens) % 2 == 0:
        return False
    return all(token.kind == ("atom" if n % 2 == 0 else ".") for n, token in enumerate(tokens))


def _word_text(token: _Token) -> tuple[str, bool]:
    """(decoded text of one phrase word, whether it was an encoded word)."""
    if token.kind == "atom" and _ENCODED_WORD.match(token.text):
        return _checked_encoded(token.text), True
    if token.kind == "quoted" and "=?" in token.text:
        # Outlook writes encoded words inside quotes; readers decode them there too.
        decoded = " ".join(
            _checked_encoded(part) if _ENCODED_WORD.match(part) else part
            for part in token.text.split(" ")
        )
        return decoded, False
    return token.text, False


def _checked_encoded(word: str) -> str:
    decoded = decode_encoded_word(word)
    if any(char in decoded for char in "@<>") or any(_is_control(c) for c in decoded):
        # Programs that decode before parsing would find an address here.
        raise AddressError("an encoded word in the name decodes to an address")
    return decoded


def _display_name(tokens: list[_Token]) -> str:
    """RFC 5322 phrase (obs-phrase: dots allowed after the first word), decoded."""
    if not tokens:
        return ""
    if tokens[0].kind not in ("atom", "quoted"):
        raise AddressError(f"unexpected {tokens[0].text!r} before the address")
    parts: list[str] = []
    previous_encoded = False
    if any(token.kind == "@" for token in tokens):
        # CVE-2023-27043's shape: lenient parsers take this for the address.
        raise AddressError("an unquoted name that holds an address")
    for token in tokens:
        if token.kind not in ("atom", "quoted", "."):
            raise AddressError(f"unexpected {token.text!r} in the name")
        text, encoded = _word_text(token)
        # RFC 2047 6.2: white space between adjacent encoded words is not text.
        if parts and token.gap and not (encoded and previous_encoded):
            parts.append(" ")
        parts.append(text)
        previous_encoded = encoded
    name = "".join(parts)
    for match in _LOOSE_ENCODED_WORD.finditer(name):
        _checked_encoded(match.group(0))
    return " ".join(name.split())


def parse_mailbox(raw: str) -> Mailbox:
    """The one mailbox of a From-like header value; raises AddressError with the reason.

    Accepted: `addr-spec`, `[phrase] <addr-spec>`, comments around them. Refused:
    several addresses, groups, an unquoted name that is not a phrase (such as
    `alice@a.test <attacker@evil.test>`), obsolete routes, domain literals, control
    characters anywhere, encoded words in the address or decoding to an address.
    """
    text = unfold(raw)
    if len(text) > _MAX_HEADER:
        raise AddressError("header too long")
    for char in text:
        if _is_control(char) and char != "\t":
            raise AddressError(f"control character {char!r}")
    tokens = _tokens(text)
    if not tokens:
        raise AddressError("no address")
    kinds = [token.kind for token in tokens]
    if "," in kinds:
        raise AddressError("more than one address")
    if ":" in kinds or ";" in kinds:
        raise AddressError("a group or a route")
    if "<" not in kinds and ">" not in kinds:
        return Mailbox("", _addr_spec(tokens))
    if kinds.count("<") != 1 or kinds.count(">") != 1:
        raise AddressError("more than one angle-bracketed address")
    opening, closing = kinds.index("<"), kinds.index(">")
    if closing != len(tokens) - 1 or closing < opening:
        raise AddressError("text after the angle-bracketed address")
    name = _display_name(tokens[:opening])
    return Mailbox(name, _addr_spec(tokens[opening + 1 : closing]))


def check_addr_spec(text: str) -> str:
    """`text` as a bare lower-cased address when it is exactly one valid addr-spec."""
    tokens = _tokens(unfold(text).strip())
    return _addr_spec(tokens)


def bare_address(text: str) -> str:
    """The lower-cased address of a configured address (`Name <a@b>` or `a@b`).

    For the server's own settings, which are trusted: when they do not parse strictly
    the stripped, lower-cased text is used as it is.
    """
    try:
        return parse_mailbox(text).address
    except AddressError:
        return text.strip().lower()
