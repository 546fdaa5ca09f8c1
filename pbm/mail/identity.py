"""One mailbox, one identity: the key that budgets, confirmations, refusals, bounce
scores and throttles are kept under.

Many spellings reach one mailbox: `Alice+chess@Example.ORG`, `alice@example.org`, a
domain written as its U-label (`bücher.example`), its A-label (`xn--bcher-kva.example`)
or in decomposed Unicode (NFD). A budget kept per spelling is a budget per attacker's
whim, so everything that counts or remembers something about an address keys on
`mailbox_key(address)` instead:

- the domain is NFC-normalised, lower-cased and written as its IDNA A-label (UTS 46
  mapping as far as the standard library's `idna` codec goes; a domain it refuses is
  kept as lower-cased NFC text, so the key never fails on an address that parsed);
- the local part is NFC-normalised; everything from the first tag separator on is
  dropped (`+` by default: `alice+x` is `alice`); its case is folded unless the
  operator says his mail server tells `Alice` from `alice`.

The key is for counting and matching, never for sending: mail goes to the address as
the player wrote it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from pbm.config import Config


@dataclass(frozen=True)
class MailboxRules:
    """How the operator's and the world's mail servers spell one mailbox.

    `tag_separators`: characters that start a sub-address tag in a local part (`+` for
    most providers; `-` for some Postfix and qmail setups); empty for none.
    `fold_local_case`: whether `Alice@` and `alice@` are one mailbox (true for almost
    every provider, and the safe side for a budget)."""

    tag_separators: str = "+"
    fold_local_case: bool = True


DEFAULT_RULES = MailboxRules()


def operator_rules(config: Config) -> MailboxRules:
    """The rules of `[mail] tag_separators` and `fold_local_case`."""
    return MailboxRules(config.tag_separators, config.fold_local_case)


def a_label(domain: str) -> str:
    """`domain` as DNS spells it, in lower case (bücher.de and xn--bcher-kva.de are one
    domain)."""
    text = unicodedata.normalize("NFC", domain.strip().rstrip(".")).lower()
    try:
        return text.encode("idna").decode("ascii").lower()
    except UnicodeError:
        # Labels the codec refuses (too long, odd characters) still key consistently.
        return text


def u_label(domain: str) -> str:
    """`domain` as players write it (xn--bcher-kva.de is bücher.de); a domain the codec
    refuses as it is."""
    try:
        return domain.encode("ascii").decode("idna")
    except UnicodeError:
        return domain


def _local_key(local: str, rules: MailboxRules) -> str:
    text = unicodedata.normalize("NFC", local)
    cut = min((i for i, c in enumerate(text) if c in rules.tag_separators), default=len(text))
    # A local part that starts with a separator ("+x@") has no base to keep.
    if cut > 0:
        text = text[:cut]
    return text.casefold() if rules.fold_local_case else text


def mailbox_key(address: str, rules: MailboxRules = DEFAULT_RULES) -> str:
    """The identity of the mailbox `address` (a bare addr-spec) reaches."""
    local, at, domain = address.strip().rpartition("@")
    if not at:
        return _local_key(address.strip(), rules)
    return f"{_local_key(local, rules)}@{a_label(domain)}"
