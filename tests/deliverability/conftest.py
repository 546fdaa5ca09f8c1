"""The receivers' own tools on loopback: a DNS server (dnsmasq) serving a test zone on a
free port, and OpenDKIM verifying signed mail with its resolver pointed at that server.

scripts/test.sh installs dnsmasq-base, opendkim, opendkim-tools and spamassassin from
Debian when they are missing; a test whose tool is absent is skipped, naming it.
"""

from __future__ import annotations

import getpass
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import dns.exception
import pytest

from pbm.mail.doctor import make_resolver
from tests.tools import missing

DNSMASQ = "/usr/sbin/dnsmasq"
OPENDKIM = "/usr/sbin/opendkim"
START_SECONDS = 10.0
VERIFY_SECONDS = 30.0


def tool(path: str, package: str) -> str:
    if not Path(path).exists() and shutil.which(Path(path).name) is None:
        missing(f"{path} missing: scripts/test.sh installs Debian's {package}")
    return path if Path(path).exists() else str(shutil.which(Path(path).name))


def free_port() -> int:
    """A port free for UDP and TCP right now on 127.0.0.1."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.bind(("127.0.0.1", 0))
            port = int(udp.getsockname()[1])
            with socket.socket() as tcp:
                try:
                    tcp.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    raise RuntimeError("no free port")


@dataclass
class Zone:
    """The records a test zone holds, as dnsmasq options."""

    txt: dict[str, list[str]] = field(default_factory=dict)  # name -> one text per record
    mx: list[tuple[str, str, int]] = field(default_factory=list)  # (domain, host, preference)
    hosts: list[tuple[str, str]] = field(default_factory=list)  # (name, IP): A and PTR
    addresses: list[tuple[str, str]] = field(default_factory=list)  # (name, IP): A alone
    pointers: list[tuple[str, str]] = field(default_factory=list)  # (reverse name, name)

    def options(self) -> list[str]:
        lines = []
        for name, texts in self.txt.items():
            for text in texts:
                # dnsmasq holds each quoted piece as one string of the record (<= 255)
                pieces = [text[i : i + 255] for i in range(0, len(text), 255)]
                quoted = ",".join(f'"{piece}"' for piece in pieces)
                lines.append(f"txt-record={name},{quoted}")
        lines += [f"mx-host={domain},{host},{pref}" for domain, host, pref in self.mx]
        lines += [f"host-record={name},{ip}" for name, ip in self.hosts]
        lines += [f"address=/{name}/{ip}" for name, ip in self.addresses]
        lines += [f"ptr-record={reverse},{name}" for reverse, name in self.pointers]
        return lines


@dataclass
class DnsServer:
    port: int
    process: subprocess.Popen[bytes]

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


def start_dns(zone: Zone, directory: Path, domains: list[str]) -> DnsServer:
    """dnsmasq answering for `domains` (and reverse lookups) from `zone` alone."""
    binary = tool(DNSMASQ, "dnsmasq-base")
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = directory / "dnsmasq.conf"
    settings = [
        f"port={port}",
        "listen-address=127.0.0.1",
        "bind-interfaces",
        "no-resolv",
        "no-hosts",
        "no-negcache",
        f"user={getpass.getuser()}",  # no switch to `nobody`: it runs as the tests do
        "local=/in-addr.arpa/",
        *(f"local=/{d}/" for d in domains),
        *zone.options(),
    ]
    conf.write_text("\n".join(s for s in settings if s) + "\n")
    with (directory / "dnsmasq.log").open("wb") as log:
        process = subprocess.Popen(
            [binary, "--keep-in-foreground", f"--conf-file={conf}", "--log-facility=-"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server = DnsServer(port, process)
    resolver = make_resolver(server.address)
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            resolver.resolve(f"{domains[0]}.", "SOA", lifetime=1.0)
            break
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            break  # it answers
        except dns.exception.DNSException as exc:
            if process.poll() is not None or time.monotonic() > deadline:
                stop_dns(server)
                log_text = (directory / "dnsmasq.log").read_text()
                raise RuntimeError(f"dnsmasq did not start: {log_text}") from exc
            time.sleep(0.05)
    return server


def stop_dns(server: DnsServer) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=5)


@pytest.fixture
def dns_server(tmp_path: Path) -> Iterator[Callable[[Zone, list[str]], DnsServer]]:
    """Starts dnsmasq for a zone (as often as a test asks); all are stopped after it."""
    started: list[DnsServer] = []

    def start(zone: Zone, domains: list[str]) -> DnsServer:
        server = start_dns(zone, tmp_path / f"dns{len(started)}", domains)
        started.append(server)
        return server

    yield start
    for server in started:
        stop_dns(server)


# What OpenDKIM's test mode prints for the header it would add (with -vvv).
_RESULTS = re.compile(r"hname='Authentication-Results' hvalue='(.*?)'", re.DOTALL)


def opendkim_verify(raw: bytes, dns: DnsServer, directory: Path) -> str:
    """The Authentication-Results value OpenDKIM writes for `raw`, its keys looked up in
    `dns` through its Unbound resolver."""
    binary = tool(OPENDKIM, "opendkim")
    directory.mkdir(parents=True, exist_ok=True)
    unbound = directory / "unbound.conf"
    # Unbound answers test. and 127.in-addr.arpa. itself (RFC 6761) unless told not to.
    unbound.write_text(
        "server:\n"
        "    do-not-query-localhost: no\n"
        '    local-zone: "test." nodefault\n'
        '    local-zone: "127.in-addr.arpa." nodefault\n'
        "forward-zone:\n"
        '    name: "."\n'
        f"    forward-addr: 127.0.0.1@{dns.port}\n"
    )
    conf = directory / "opendkim.conf"
    conf.write_text(
        f"Mode v\nResolverConfiguration {unbound}\nAuthservID verifier.test\nSyslog no\n"
    )
    message = directory / "message.eml"
    message.write_bytes(raw)
    done = subprocess.run(
        [binary, "-x", str(conf), "-t", str(message), "-vvv"],
        capture_output=True,
        timeout=VERIFY_SECONDS,
    )
    output = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    found = _RESULTS.search(output)
    assert found is not None, f"opendkim wrote no Authentication-Results:\n{output}"
    return " ".join(found.group(1).split())
