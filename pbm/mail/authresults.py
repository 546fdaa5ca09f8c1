"""Authentication-Results (RFC 8601): what the receiving MTA found out about a mail.

An MTA that checks SPF, DKIM and DMARC records its verdicts in an
`Authentication-Results: mx.example.org; dkim=pass header.d=...; dmarc=fail ...`
header on top of the message. Anyone can write such a header into a mail, so only
the producers the operator names (`[security] authserv_ids`) are read, and of each
only the topmost header: the one its MTA added last, above anything the sender wrote.

A trusted verdict can only take trust away: `sender_verdict` says when a mail's From
failed DMARC or DKIM, so that a reply token alone does not authenticate it. Parsing
never raises; junk yields fewer results, not errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# RFC 2045 tspecials: an unquoted authserv-id is a token without them.
_TSPECIALS = frozenset('()<>@,;:\\"/[]?=')


@dataclass(frozen=True)
class AuthResult:
    """One `method=result` entry with its reason and `ptype.property=value` pairs."""

    method: str  # lower-cased, without a "/version"
    result: str  # lower-cased
    reason: str | None = None
    properties: tuple[tuple[str, str], ...] = ()  # (lower-cased "header.from", value)


@dataclass(frozen=True)
class AuthResults:
    """One parsed Authentication-Results header value."""

    authserv_id: str  # as written; "" when the header names none
    version: str | None
    results: tuple[AuthResult, ...]


@dataclass(frozen=True)
class SenderVerdict:
    """What the trusted Authentication-Results say about the From of one mail.

    `checked`: a header of a trusted authserv-id was present. `failed`: it says the
    From is forged (dmarc=fail, or dkim=fail/permerror with no dkim=pass).
    `authserv_id`: the producer the verdict comes from. `reason`: the results that
    decided it, e.g. "dmarc=fail", for log lines and the player's reply.
    """

    failed: bool
    authserv_id: str | None
    reason: str
    checked: bool


def _without_comments(text: str) -> str:
    """`text` with (nested) comments replaced by a space; quoted strings kept whole."""
    out: list[str] = []
    depth = 0
    quoted = False
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and (quoted or depth):
            if not depth:
                out.append(text[i : i + 2])
            i += 2
            continue
        if depth:
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    out.append(" ")
        elif quoted:
            out.append(char)
            if char == '"':
                quoted = False
        elif char == "(":
            depth = 1
        else:
            out.append(char)
            quoted = char == '"'
        i += 1
    return "".join(out)


def _split_semicolons(text: str) -> list[str]:
    """Split at ";" outside quoted strings."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\" and quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == ";" and not quoted:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        inner = value[1:-1]
        out: list[str] = []
        i = 0
        while i < len(inner):
            if inner[i] == "\\" and i + 1 < len(inner):
                i += 1
            out.append(inner[i])
            i += 1
        return "".join(out)
    return value


def _items(segment: str) -> list[tuple[str, str | None]]:
    """`key=value` items of one segment (spaces allowed around "="), and bare words."""
    items: list[tuple[str, str | None]] = []
    i, size = 0, len(segment)
    while i < size:
        if segment[i].isspace():
            i += 1
            continue
        start = i
        if segment[i] == '"':
            i = _end_of_quoted(segment, i)
        else:
            while i < size and not segment[i].isspace() and segment[i] not in '="':
                i += 1
        key = segment[start:i]
        j = i
        while j < size and segment[j].isspace():
            j += 1
        if j < size and segment[j] == "=" and key:
            j += 1
            while j < size and segment[j].isspace():
                j += 1
            value_start = j
            if j < size and segment[j] == '"':
                j = _end_of_quoted(segment, j)
            else:
                while j < size and not segment[j].isspace():
                    j += 1  # unquoted values may hold "=" and "/" (base64, addresses)
            items.append((key, _unquote(segment[value_start:j])))
            i = j
        elif key:
            items.append((key, None))
        else:
            i += 1  # a stray "="
    return items


def _end_of_quoted(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        i += 1
    return len(text)


def _result(items: list[tuple[str, str | None]]) -> AuthResult | None:
    if not items or items[0][1] is None:
        return None
    method_spec, result = items[0]
    method = method_spec.split("/", 1)[0].strip().lower()
    if not method or not result:
        return None
    reason: str | None = None
    properties: list[tuple[str, str]] = []
    for key, value in items[1:]:
        if value is None:
            continue
        if key.lower() == "reason" and reason is None:
            reason = value
        else:
            properties.append((key.lower(), value))
    return AuthResult(method, result.strip().lower(), reason, tuple(properties))


def parse_authentication_results(value: str) -> AuthResults | None:
    """One header value parsed; None when it is too broken to name anything."""
    try:
        segments = _split_semicolons(_without_comments(value))
    except Exception:  # belt and braces: header text is hostile input
        return None
    head = _items(segments[0])
    results: list[AuthResult] = []
    authserv_id, version = "", None
    if head and head[0][1] is None:
        authserv_id = _unquote(head[0][0]).strip()
        if head[0][0][:1] != '"' and any(c in _TSPECIALS for c in authserv_id):
            return None  # not an RFC 2045 token: junk, not a producer's name
        if len(head) > 1 and head[1][1] is None and head[1][0].isdigit():
            version = head[1][0]
    elif head:
        # No authserv-id (as some large providers write it): its results are still
        # read, but no configured id can ever match "".
        first = _result(head)
        if first is not None:
            results.append(first)
    if not authserv_id and not results:
        return None
    for segment in segments[1:]:
        found = _result(_items(segment))
        if found is not None:
            results.append(found)
    return AuthResults(authserv_id, version, tuple(results))


def _failure(parsed: AuthResults) -> str | None:
    """Why this header says the From is forged, or None."""
    dmarc = [r.result for r in parsed.results if r.method == "dmarc"]
    if "fail" in dmarc:
        return "dmarc=fail"
    dkim = [r.result for r in parsed.results if r.method == "dkim"]
    if "pass" not in dkim:
        for bad in ("fail", "permerror"):
            if bad in dkim:
                return f"dkim={bad}"
    return None


def _summary(parsed: AuthResults) -> str:
    seen = dict.fromkeys(
        f"{r.method}={r.result}" for r in parsed.results if r.method in ("dmarc", "dkim")
    )
    return ", ".join(seen) or "no dmarc or dkim result"


def sender_verdict(values: Sequence[str], trusted_ids: Sequence[str]) -> SenderVerdict:
    """The verdict of the trusted producers on a mail's From.

    `values` are the mail's Authentication-Results values, topmost first (as
    `InboundMail.authentication_results` holds them). Only the topmost header of each
    trusted authserv-id counts (compared case-insensitively); others are ignored
    entirely. With no trusted ids nothing is checked and nothing fails.
    """
    trusted = {t.strip().lower() for t in trusted_ids if t.strip()}
    if not trusted:
        return SenderVerdict(False, None, "no trusted authserv-id configured", False)
    topmost: dict[str, AuthResults] = {}
    for value in values:
        parsed = parse_authentication_results(value)
        if parsed is None:
            continue
        key = parsed.authserv_id.lower()
        if key in trusted and key not in topmost:
            topmost[key] = parsed
    if not topmost:
        return SenderVerdict(False, None, "no Authentication-Results of a trusted id", False)
    for parsed in topmost.values():
        failure = _failure(parsed)
        if failure is not None:
            return SenderVerdict(True, parsed.authserv_id, failure, True)
    first = next(iter(topmost.values()))
    return SenderVerdict(False, first.authserv_id, _summary(first), True)


def dmarc_passed(values: Sequence[str], trusted_ids: Sequence[str], domain: str) -> bool:
    """Whether the topmost header of a trusted producer says dmarc=pass for the From
    `domain` (its `header.from`), and no trusted producer says the From failed: the one
    verdict that vouches for a sender, used to confirm a signup's address at once."""
    if sender_verdict(values, trusted_ids).failed:
        return False
    trusted = {t.strip().lower() for t in trusted_ids if t.strip()}
    wanted = domain.strip().rstrip(".").lower()
    seen: set[str] = set()
    for value in values:
        parsed = parse_authentication_results(value)
        if parsed is None or parsed.authserv_id.lower() not in trusted:
            continue
        if parsed.authserv_id.lower() in seen:
            continue
        seen.add(parsed.authserv_id.lower())
        for result in parsed.results:
            where = dict(result.properties).get("header.from", "").rstrip(".").lower()
            if result.method == "dmarc" and result.result == "pass" and where == wanted:
                return True
    return False
