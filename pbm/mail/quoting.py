"""Find the fresh text of a reply: drop quoted text, reply headers and signatures.

Works on plain text with `\\n` line ends (HTML bodies are converted first, with
`<blockquote>` content already prefixed by "> "). The rules, in the order they are
tried on each line:

- a line starting with ">" is quoted and dropped (a quoted board mail goes with it);
- a signature separator ("-- ", "--", a line of underscores) ends the fresh text;
- an Outlook block ("-----Original Message-----", or a "From:" line followed closely
  by "Sent:"/"Date:") ends the fresh text, since everything after it is the original;
- a mobile footer ("Sent from my iPhone") ends the fresh text;
- an attribution line ("On <date>, <who> wrote:", also wrapped over up to three lines
  and in other languages) is dropped; when no quoted line follows it, the unprefixed
  original follows and the fresh text ends there.
Finally a trailing sign-off ("Cheers,\\nAlice") is dropped. An inline PGP signed
message is reduced to its signed text first.
"""

from __future__ import annotations

import re

# "-----Original Message-----" and its relatives in the languages mail programs use.
_ORIGINAL_MESSAGE = re.compile(
    r"^\s*-{2,}\s*(?:original message|forwarded message|ursprüngliche nachricht|"
    r"weitergeleitete nachricht|message d'origine|message transféré|mensaje original|"
    r"mensaje reenviado|messaggio originale|messaggio inoltrato|oorspronkelijk bericht|"
    r"doorgestuurd bericht|mensagem original|mensagem encaminhada|opprinnelig melding|"
    r"oprindelig meddelelse|ursprungligt meddelande|alkuperäinen viesti|"
    r"wiadomość oryginalna|исходное сообщение|пересылаемое сообщение)\s*-{2,}\s*$",
    re.IGNORECASE,
)
_FORWARDED_INTRO = re.compile(r"^\s*begin forwarded message\s*:\s*$", re.IGNORECASE)
_UNDERSCORE_RULE = re.compile(r"^\s*_{2,}\s*$")

# Outlook's bare header block: a "From:" line, then "Sent:"/"Date:" within a few lines.
_HEADER_FROM = re.compile(
    r"^\s*\*?(?:from|von|de|da|van|från|fra|od|от|发件人)\s*\*?\s*[:：]\s*\*?\s*\S",
    re.IGNORECASE,
)
_HEADER_SENT = re.compile(
    r"^\s*\*?(?:sent|date|gesendet|datum|envoyé|date d'envoi|enviado|enviada|fecha|"
    r"inviato|data|verzonden|skickat|sendt|wysłano|отправлено|дата|发送时间|日期)"
    r"\s*\*?\s*[:：]",
    re.IGNORECASE,
)
_HEADER_LOOKAHEAD = 5

_MOBILE_FOOTER = re.compile(
    r"^\s*(?:sent from my \w[\w\s-]*|sent from (?:mail|outlook|yahoo mail|my mobile)\b.*|"
    r"sent with (?:proton ?mail|spark|blackberry|airmail|tutanota|k-9 mail)\b.*|"
    r"get outlook for \w+.*|sent via (?:the )?\w+ (?:app|mobile|mail)\b.*|"
    r"von meinem \w[\w\s-]* gesendet|envoyé de mon \w[\w\s-]*|"
    r"enviado desde mi \w[\w\s-]*|enviado do meu \w[\w\s-]*|"
    r"inviato da(?:l mio)? \w[\w\s-]*|verzonden vanaf mijn \w[\w\s-]*|"
    r"skickat från min \w[\w\s-]*)\s*[.!]?\s*$",
    re.IGNORECASE,
)

# Attribution lines: an introducing word at the start and a "wrote" verb at the end.
_ATTRIBUTION_INTRO = (
    r"(?:on|am|le|el|il(?: giorno)?|op|em|den|på|w dniu|dne|dňa|в|у|el día|le jour)"
)
_ATTRIBUTION_VERB = (
    r"(?:wrote|writes|schrieb|a écrit|escribió|ha scritto|schreef|escreveu|skrev|"
    r"napisał\(a\)|napisała|napisał|pisze|napsal\(a\)|napsal|kirjoitti|"
    r"написал\(а\)|написала|написал|пише|写道|寫道)"
)
_ATTRIBUTION = re.compile(
    rf"^\s*{_ATTRIBUTION_INTRO}\s.*{_ATTRIBUTION_VERB}.{{0,80}}?\s*[:：]\s*$",
    re.IGNORECASE | re.DOTALL,
)
# Without a known intro ("Alice <a@example.com> wrote:", "alice@example.com schrieb:").
_ATTRIBUTION_BARE = re.compile(
    rf"^.{{0,200}}\b{_ATTRIBUTION_VERB}\s*[:：]\s*$|^.{{0,200}}{_ATTRIBUTION_VERB}[:：]\s*$",
    re.IGNORECASE | re.DOTALL,
)
# A line ending in ":" that names an address or a time, right before a quote (Gmail in
# some languages has no verb at all: "вс, 22 нояб. 2026 г. в 03:12, Alice <a@b.c>:").
_ATTRIBUTION_LOOSE = re.compile(r"^.{0,250}(?:@|\d{1,2}[:.]\d{2}).{0,250}[:：]\s*$", re.DOTALL)
_ATTRIBUTION_MAX_LINES = 3

_SIGNOFF = re.compile(
    r"^\s*(?:cheers|thanks|thank you|thx|many thanks|regards|best|best regards|"
    r"kind regards|warm regards|best wishes|all the best|yours|yours truly|sincerely|"
    r"take care|bye|ciao|greetings|good luck|gl|hf|gg|"
    r"gruß|grüße|viele grüße|liebe grüße|beste grüße|mfg|lg|vg|"
    r"cordialement|amitiés|salutations|bien à vous|saludos|un saludo|"
    r"saluti|cordiali saluti|groeten|met vriendelijke groet|hälsningar|mvh)"
    r"\s*[,.!]*\s*$",
    re.IGNORECASE,
)
_MAX_MARKER_LENGTH = 200
_PGP_BEGIN = "-----BEGIN PGP SIGNED MESSAGE-----"
_PGP_SIGNATURE = "-----BEGIN PGP SIGNATURE-----"
_NAME_LINE = re.compile(r"^\s*[^\s:;<>@][^:;<>@]{0,39}$")


def is_quoted(line: str) -> bool:
    """True for a line of quoted text ("> text", ">text", ">> text")."""
    return line.startswith(">")


def is_signature_separator(line: str) -> bool:
    """True for "-- " (RFC 3676), "--" (clients that trim it) and underscore rules."""
    stripped = line.rstrip()
    return stripped == "--" or bool(_UNDERSCORE_RULE.match(line))


def _is_header_block(lines: list[str], index: int) -> bool:
    if not _HEADER_FROM.match(lines[index]):
        return False
    window = lines[index + 1 : index + 1 + _HEADER_LOOKAHEAD]
    return any(_HEADER_SENT.match(line) for line in window)


def _next_nonblank_index(lines: list[str], start: int) -> int | None:
    for index in range(start, len(lines)):
        if lines[index].strip():
            return index
    return None


def _next_nonblank(lines: list[str], start: int) -> str | None:
    index = _next_nonblank_index(lines, start)
    return None if index is None else lines[index]


def _attribution_length(lines: list[str], index: int) -> int:
    """How many lines starting at `index` form an attribution line, or 0."""
    if is_quoted(lines[index]) or not lines[index].strip():
        return 0
    for count in range(1, _ATTRIBUTION_MAX_LINES + 1):
        group = lines[index : index + count]
        if len(group) < count or any(not line.strip() or is_quoted(line) for line in group):
            return 0
        if not group[-1].rstrip().endswith((":", "：")):
            continue  # every attribution form ends in a colon; skip the regexes
        joined = " ".join(line.strip() for line in group)
        if len(joined) > 400:
            return 0
        if _ATTRIBUTION.match(joined):
            return count
        # Without an introducing word, a wrapped group counts only when it was wrapped
        # inside the address ("Alice <" / "a@example.com> wrote:", as Gmail wraps);
        # otherwise the line above an attribution (a command) would be taken with it.
        if not all(line.count("<") > line.count(">") for line in group[:-1]):
            continue
        follower = _next_nonblank(lines, index + count)
        quote_follows = follower is not None and is_quoted(follower)
        if quote_follows and (_ATTRIBUTION_BARE.match(joined) or _ATTRIBUTION_LOOSE.match(joined)):
            return count
    return 0


def _ends_fresh_text(lines: list[str], index: int) -> bool:
    line = lines[index]
    if len(line) > _MAX_MARKER_LENGTH:
        return False  # markers are short; long lines would only cost regex time
    return bool(
        is_signature_separator(line)
        or _ORIGINAL_MESSAGE.match(line)
        or _FORWARDED_INTRO.match(line)
        or _MOBILE_FOOTER.match(line)
        or _is_header_block(lines, index)
    )


def _drop_signoff(lines: list[str]) -> list[str]:
    """Drop a closing like "Cheers,\\nAlice" (sign-off plus at most two name lines)."""
    for name_lines in (1, 2):
        start = len(lines) - 1 - name_lines
        if start < 0:
            break
        names = lines[start + 1 :]
        if _SIGNOFF.match(lines[start]) and all(
            _NAME_LINE.match(name) and len(name.split()) <= 4 for name in names
        ):
            if start > 0 and lines[start - 1].strip():
                continue  # glued to the text above: part of the prose, not a closing
            return lines[:start]
    return lines


def _strip_clearsign_armor(lines: list[str]) -> list[str]:
    """The signed text of an inline PGP message (RFC 4880 7), or the lines unchanged."""
    start = _next_nonblank_index(lines, 0)
    if start is None or lines[start].strip() != _PGP_BEGIN:
        return lines
    body_start = start + 1
    while body_start < len(lines) and lines[body_start].strip():
        body_start += 1  # armor headers ("Hash: SHA256") up to the first blank line
    signed: list[str] = []
    for line in lines[body_start + 1 :]:
        if line.strip() == _PGP_SIGNATURE:
            break
        signed.append(line[2:] if line.startswith("- ") else line)  # dash-escaping
    return signed


def fresh_text(text: str) -> str:
    """Return the text the sender wrote in this message (see the module docstring)."""
    lines = _strip_clearsign_armor(text.split("\n"))
    kept: list[str] = []
    removed_here = False  # collapse blank lines around a removed block
    index = 0
    while index < len(lines):
        line = lines[index]
        if is_quoted(line):
            removed_here = True
            index += 1
            continue
        if _ends_fresh_text(lines, index):
            break
        attribution = _attribution_length(lines, index)
        if attribution:
            index += attribution
            follower = _next_nonblank(lines, index)
            if follower is None or not is_quoted(follower):
                break  # the original follows without "> ": nothing after is fresh
            removed_here = True
            continue
        if not line.strip():
            if removed_here and kept and not kept[-1]:
                index += 1
                continue
            kept.append("")
        else:
            if removed_here and kept and kept[-1]:
                kept.append("")  # keep text on either side of a removed quote apart
            removed_here = False
            kept.append(line.rstrip())
        index += 1
    while kept and not kept[-1]:
        kept.pop()
    while kept and not kept[0]:
        kept.pop(0)
    kept = _drop_signoff(kept)
    while kept and not kept[-1]:
        kept.pop()
    return "\n".join(kept)


def first_line(text: str) -> str | None:
    """The first non-blank line of `text`, stripped, or None."""
    for line in text.split("\n"):
        if line.strip():
            return line.strip()
    return None


def quote_lines(text: str) -> str:
    """Quote every line of `text` with "> " (a bare ">" for blank lines)."""
    body = text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
    return "\n".join(f"> {line}" if line else ">" for line in body.split("\n"))
