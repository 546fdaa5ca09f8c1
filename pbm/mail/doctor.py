"""`pbm mail doctor`: are the DNS records a receiver checks published for pbm's domain?

Five checks, each pass, warn or fail with what was found, what is wrong and the record
to publish: MX (mail to pbm arrives), SPF (the record allows the relay pbm sends
through: its addresses are evaluated against the ip4/ip6/a/mx/include/redirect terms,
at most ten DNS-querying terms as RFC 7208 section 4.6.4 bounds them), DKIM (the key at
`SELECTOR._domainkey.DOMAIN` is the public half of `[mail.dkim] key_file`), DMARC (a
policy at `_dmarc.DOMAIN`, aligned with the From's domain) and the relay's PTR (named,
and that name leads back to the address). Only DNS is asked, through one dnspython
resolver (a given server for tests and split-horizon setups); nothing is sent.
"""

from __future__ import annotations

import base64
import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

import dns.exception
import dns.resolver
import dns.reversename
from publicsuffixlist import PublicSuffixList

from pbm.mail.dkim import dns_record, record_name
from pbm.mail.identity import a_label

# RFC 7208 section 4.6.4: at most 10 terms that cause DNS lookups per evaluation.
SPF_LOOKUP_LIMIT = 10
DNS_SECONDS = 5.0

# a, a:host, a/24, mx:host/24//64 (RFC 7208 section 5.3 and 5.4)
HOST_TERM = re.compile(r"(a|mx)(?::([^/]+))?(?:/(\d+))?(?://(\d+))?")

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class Verdict(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"


class CheckName(StrEnum):
    MX = "mx"
    SPF = "spf"
    DKIM = "dkim"
    DMARC = "dmarc"
    PTR = "ptr"


@dataclass(frozen=True)
class Check:
    """One check's result: what was found, what is wrong, and what to publish."""

    name: CheckName
    verdict: Verdict
    found: str
    problem: str = ""
    publish: str = ""


@dataclass(frozen=True)
class DomainSetup:
    """What pbm sends with, as the configuration says it."""

    domain: str  # the domain checked (MX, SPF, DMARC)
    from_domain: str  # the domain of pbm's From address
    relay_host: str | None  # the host that hands pbm's mail to the world; None: unknown
    dkim_domain: str | None = None
    dkim_selector: str | None = None
    dkim_public_key: bytes | None = None  # DER, from key_file; None: not configured


class LookupFailed(Exception):
    """The DNS server did not answer (timeout, refused, server failure)."""


class Dns:
    """The lookups the checks make: records as text, [] when the name has none."""

    def __init__(self, nameserver: str = "") -> None:
        self.resolver = make_resolver(nameserver)
        self.asked = nameserver or "the system's resolvers"

    def texts(self, name: str, rdtype: str) -> list[str]:
        try:
            answer = self.resolver.resolve(name, rdtype, search=False, lifetime=DNS_SECONDS)
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            return []
        except dns.resolver.LifetimeTimeout as exc:
            # dnspython's own text repeats each try's timeout in one 300-column line.
            raise LookupFailed(
                f"{rdtype} {name}: no answer from {self.asked} within {DNS_SECONDS:g} s"
            ) from exc
        except dns.exception.DNSException as exc:
            raise LookupFailed(f"{rdtype} {name}: {exc}") from exc
        if rdtype == "TXT":
            return [b"".join(r.strings).decode("utf-8", "replace") for r in answer]
        return [r.to_text() for r in answer]

    def addresses(self, host: str) -> list[IpAddress]:
        """The host's IPv4 and IPv6 addresses (an address literal is itself)."""
        try:
            return [ipaddress.ip_address(host)]
        except ValueError:
            pass
        return [ipaddress.ip_address(a) for t in ("A", "AAAA") for a in self.texts(host, t)]

    def mx_hosts(self, domain: str) -> list[str]:
        records = (r.split() for r in self.texts(domain, "MX"))
        return [host.rstrip(".") for _, host in sorted((int(p), h) for p, h in records)]


def make_resolver(nameserver: str = "") -> dns.resolver.Resolver:
    """A resolver asking `nameserver` ("IP" or "IP:PORT", "[IPv6]:PORT"), else the
    system's resolvers; ValueError for a nameserver that is no address."""
    if not nameserver:
        return dns.resolver.Resolver()
    host, port = nameserver, 53
    if nameserver.startswith("["):
        host, _, rest = nameserver[1:].partition("]")
        port = int(rest.removeprefix(":") or 53)
    elif nameserver.count(":") == 1:
        host, _, text = nameserver.partition(":")
        port = int(text)
    ipaddress.ip_address(host)  # a name here would need a resolver of its own
    return dns.resolver.make_resolver_at(host, port)


def run_checks(setup: DomainSetup, lookup: Dns) -> list[Check]:
    """Every check, in the order a receiver meets them; a lookup that failed is that
    check's failure, not the end of the others."""
    steps: list[tuple[CheckName, Callable[[], Check]]] = [
        (CheckName.MX, lambda: check_mx(setup, lookup)),
        (CheckName.SPF, lambda: check_spf(setup, lookup)),
        (CheckName.DKIM, lambda: check_dkim(setup, lookup)),
        (CheckName.DMARC, lambda: check_dmarc(setup, lookup)),
        (CheckName.PTR, lambda: check_ptr(setup, lookup)),
    ]
    checks = []
    for name, step in steps:
        try:
            checks.append(step())
        except LookupFailed as exc:
            checks.append(Check(name, Verdict.FAIL, "", f"the DNS lookup failed: {exc}"))
    return checks


def check_mx(setup: DomainSetup, lookup: Dns) -> Check:
    hosts = lookup.mx_hosts(setup.domain)
    if hosts:
        return Check(CheckName.MX, Verdict.PASS, f"MX {', '.join(hosts)}")
    if lookup.addresses(setup.domain):
        return Check(
            CheckName.MX,
            Verdict.WARN,
            "no MX; mail goes to the domain's own address",
            "no MX record: some senders refuse to mail a domain without one",
            f"{setup.domain}. IN MX 10 mail.{setup.domain}.",
        )
    return Check(
        CheckName.MX,
        Verdict.FAIL,
        "no MX, no address",
        f"no MX record for {setup.domain}: mail to pbm cannot arrive",
        f"{setup.domain}. IN MX 10 mail.{setup.domain}.",
    )


def spf_record(lookup: Dns, domain: str) -> str | None:
    records = [t for t in lookup.texts(domain, "TXT") if t.lower().startswith("v=spf1")]
    return records[0] if len(records) == 1 else None


class SpfLimit(Exception):
    """More DNS-querying terms than SPF_LOOKUP_LIMIT."""


@dataclass
class SpfEvaluation:
    lookup: Dns
    lookups: int = 0

    def count(self) -> None:
        self.lookups += 1
        if self.lookups > SPF_LOOKUP_LIMIT:
            raise SpfLimit

    def result(self, domain: str, ip: IpAddress) -> str:
        """pass, fail, softfail, neutral or none (no record) for `ip` sending as `domain`."""
        record = spf_record(self.lookup, domain)
        if record is None:
            return "none"
        redirect = None
        for term in record.split()[1:]:
            qualifier = {"+": "pass", "-": "fail", "~": "softfail", "?": "neutral"}.get(term[0])
            mechanism = term[1:] if qualifier else term
            if mechanism.lower().startswith("redirect="):
                redirect = mechanism.split("=", 1)[1]
                continue
            if "=" in mechanism:
                continue  # exp= and unknown modifiers change no result
            if self.matches(mechanism, domain, ip):
                return qualifier or "pass"
        if redirect is not None:
            self.count()
            return self.result(redirect, ip)
        return "neutral"

    def matches(self, mechanism: str, domain: str, ip: IpAddress) -> bool:
        kind, _, arg = mechanism.partition(":")
        kind = kind.lower()
        if kind == "all":
            return True
        if kind in ("ip4", "ip6"):
            return ip in ipaddress.ip_network(arg, strict=False)
        if kind == "include":
            self.count()
            return self.result(arg, ip) == "pass"
        host_term = HOST_TERM.fullmatch(mechanism.lower())
        if host_term is not None:
            self.count()
            kind, name, bits4, bits6 = host_term.groups()
            hosts = self.lookup.mx_hosts(name or domain) if kind == "mx" else [name or domain]
            for host in hosts:
                for address in self.lookup.addresses(host):
                    bits = (bits4 if address.version == 4 else bits6) or address.max_prefixlen
                    if ip in ipaddress.ip_network(f"{address}/{bits}", strict=False):
                        return True
            return False
        self.count()  # exists, ptr: not evaluated here, counted as RFC 7208 counts them
        return False


def check_spf(setup: DomainSetup, lookup: Dns) -> Check:
    suggest = f'{setup.domain}. IN TXT "v=spf1 {{}} -all"'
    if setup.relay_host is None:
        return Check(
            CheckName.SPF,
            Verdict.WARN,
            "no relay configured",
            "pbm writes into its Maildir: name the host that sends its mail with --relay",
        )
    ips = lookup.addresses(setup.relay_host)
    terms = " ".join(f"ip{ip.version}:{ip}" for ip in ips) or f"a:{setup.relay_host}"
    publish = suggest.format(terms)
    records = [t for t in lookup.texts(setup.domain, "TXT") if t.lower().startswith("v=spf1")]
    if not records:
        return Check(CheckName.SPF, Verdict.FAIL, "no SPF record", "publish one", publish)
    if len(records) > 1:
        return Check(
            CheckName.SPF,
            Verdict.FAIL,
            " | ".join(records),
            "more than one SPF record: receivers treat that as an error (permerror)",
            publish,
        )
    if not ips:
        return Check(
            CheckName.SPF, Verdict.FAIL, records[0], f"the relay {setup.relay_host} has no address"
        )
    evaluation = SpfEvaluation(lookup)
    try:
        results = {ip: evaluation.result(setup.domain, ip) for ip in ips}
    except ValueError as exc:  # a malformed ip4:/ip6: network
        return Check(CheckName.SPF, Verdict.FAIL, records[0], f"a malformed term: {exc}", publish)
    except SpfLimit:
        return Check(
            CheckName.SPF,
            Verdict.FAIL,
            records[0],
            f"more than {SPF_LOOKUP_LIMIT} DNS lookups: receivers stop with permerror",
            publish,
        )
    refused = [f"{ip} ({result})" for ip, result in results.items() if result != "pass"]
    if refused:
        return Check(
            CheckName.SPF,
            Verdict.FAIL,
            records[0],
            f"does not allow the relay {setup.relay_host}: {', '.join(refused)}",
            publish,
        )
    return Check(CheckName.SPF, Verdict.PASS, f"{records[0]} (allows {setup.relay_host})")


def dkim_tags(record: str) -> dict[str, str]:
    tags = {}
    for part in record.split(";"):
        key, sep, value = part.partition("=")
        if sep:
            tags[key.strip().lower()] = "".join(value.split())
    return tags


def check_dkim(setup: DomainSetup, lookup: Dns) -> Check:
    if setup.dkim_selector is None or setup.dkim_domain is None:
        return Check(
            CheckName.DKIM,
            Verdict.WARN,
            "pbm signs nothing (no [mail.dkim])",
            "make sure the MTA signs; or let pbm sign: `pbm mail dkim-key`",
        )
    name = record_name(setup.dkim_selector, setup.dkim_domain)
    publish = ""
    if setup.dkim_public_key is not None:
        # split as `pbm mail dkim-key` prints it: a 2048-bit key is some 400 octets, and a
        # zone file refuses a TXT string longer than 255
        publish = dns_record(setup.dkim_selector, setup.dkim_domain, setup.dkim_public_key)
    records = [t for t in lookup.texts(name, "TXT") if "p=" in t]
    if not records:
        return Check(CheckName.DKIM, Verdict.FAIL, f"no key at {name}", "publish it", publish)
    tags = dkim_tags(records[0])
    try:
        published = base64.b64decode(tags.get("p", ""), validate=True)
    except ValueError:
        published = b""
    if not published:
        return Check(
            CheckName.DKIM, Verdict.FAIL, name, "the record's p= is empty or not base64", publish
        )
    if setup.dkim_public_key is not None and published != setup.dkim_public_key:
        return Check(
            CheckName.DKIM,
            Verdict.FAIL,
            name,
            "the published key is not the public half of key_file",
            publish,
        )
    return Check(CheckName.DKIM, Verdict.PASS, f"key at {name} matches key_file")


@cache
def _public_suffixes() -> PublicSuffixList:
    # Read when the doctor first needs it: parsing the list takes about 30 ms.
    return PublicSuffixList()


def org_domain(domain: str) -> str:
    """The organizational domain (RFC 7489, section 3.2): one label more than the
    public suffix, by the Public Suffix List (games.example.co.uk -> example.co.uk,
    alice.github.io -> alice.github.io); a public suffix is its own."""
    name = a_label(domain)
    return _public_suffixes().privatesuffix(name) or name


def aligned(a: str, b: str, strict: bool) -> bool:
    """DMARC's identifier alignment (RFC 7489, section 3.1): the same domain when
    strict, the same organizational domain when relaxed."""
    if strict:
        return a_label(a) == a_label(b)
    return org_domain(a) == org_domain(b)


def check_dmarc(setup: DomainSetup, lookup: Dns) -> Check:
    name = f"_dmarc.{setup.from_domain}"
    publish = f'{name}. IN TXT "v=DMARC1; p=quarantine; rua=mailto:postmaster@{setup.from_domain}"'
    records = [t for t in lookup.texts(name, "TXT") if t.startswith("v=DMARC1")]
    if not records:
        return Check(CheckName.DMARC, Verdict.FAIL, f"no record at {name}", "publish one", publish)
    tags = dkim_tags(records[0])
    policy = tags.get("p", "").lower()
    if policy not in ("none", "quarantine", "reject"):
        return Check(
            CheckName.DMARC,
            Verdict.FAIL,
            records[0],
            "p= must be none, quarantine or reject",
            publish,
        )
    signer = setup.dkim_domain
    strict = tags.get("adkim", "r").lower() == "s"
    if signer is not None and not aligned(signer, setup.from_domain, strict):
        return Check(
            CheckName.DMARC,
            Verdict.FAIL,
            records[0],
            f"the DKIM domain {signer} is not aligned with the From's {setup.from_domain}"
            f"{' (adkim=s wants the same domain)' if strict else ''}",
        )
    if not aligned(setup.domain, setup.from_domain, tags.get("aspf", "r").lower() == "s"):
        return Check(
            CheckName.DMARC,
            Verdict.FAIL,
            records[0],
            f"the SPF domain {setup.domain} is not aligned with the From's {setup.from_domain}",
        )
    if policy == "none":
        return Check(
            CheckName.DMARC,
            Verdict.WARN,
            records[0],
            "p=none only watches: Gmail and Yahoo ask for a policy, and quarantine protects",
            publish,
        )
    return Check(CheckName.DMARC, Verdict.PASS, f"{records[0]} (aligned with the From)")


def check_ptr(setup: DomainSetup, lookup: Dns) -> Check:
    if setup.relay_host is None:
        return Check(CheckName.PTR, Verdict.WARN, "no relay configured", "name it with --relay")
    ips = lookup.addresses(setup.relay_host)
    if not ips:
        return Check(
            CheckName.PTR, Verdict.FAIL, "", f"the relay {setup.relay_host} has no address"
        )
    found, problems, publish = [], [], []
    for ip in ips:
        reverse = dns.reversename.from_address(str(ip)).to_text()
        names = [n.rstrip(".") for n in lookup.texts(reverse, "PTR")]
        found.append(f"{ip} -> {', '.join(names) or 'nothing'}")
        if not names:
            problems.append(f"{ip} has no PTR")
        elif not any(ip in lookup.addresses(n) for n in names):
            problems.append(f"{ip}'s name {names[0]} does not lead back to it")
        else:
            continue
        publish.append(f"{reverse} IN PTR {setup.relay_host}. (asked of the address's owner)")
    if problems:
        return Check(
            CheckName.PTR, Verdict.FAIL, "; ".join(found), "; ".join(problems), "\n".join(publish)
        )
    return Check(CheckName.PTR, Verdict.PASS, "; ".join(found))
