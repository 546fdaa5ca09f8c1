"""Password hashing: scrypt (memory-hard, in hashlib) with a random salt per hash, and
constant-time comparison. The cost parameters are stored in each hash, so raising them
later needs no migration."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections import OrderedDict

DEFAULT_LOG2_N = 15  # N = 32768, r = 8: 32 MiB per hash
_R = 8
_P = 1
_CACHE_SIZE = 4096
_REFUTED_SIZE = 256

# Caches of a pure function of its arguments, like pbm's others (docs/architecture.md,
# "What a process keeps"), keyed by an HMAC of (stored hash, password) under a secret
# that lives only in this process. A server checks the same passwords all day and scrypt
# is deliberately slow (about 100 ms at N=2**15), so without them a move by password
# could not reach benchmarks/process.py's floor of 150 moves/s per core. A changed
# password has a new hash, so its old entries can no longer match. Successful checks,
# at most _CACHE_SIZE. Failed ones, at most _REFUTED_SIZE in a table of their own, so
# that wrong passwords never push a right one out: they are kept only so that a check
# the daemon ran outside its write lock (PasswordCheckNeeded) is not run again inside
# it. Whoever checks still counts each failure (pbm.services.accounts.users.authenticate).
_cache_key = os.urandom(32)
_verified: OrderedDict[bytes, None] = OrderedDict()
_refuted: OrderedDict[bytes, None] = OrderedDict()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4))


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=256 * n * r + 2**20, dklen=32
    )


def hash_password(password: str, log2_n: int = DEFAULT_LOG2_N) -> str:
    salt = os.urandom(16)
    n = 2**log2_n
    digest = _scrypt(password, salt, n, _R, _P)
    return f"scrypt${log2_n}${_R}${_P}${_b64(salt)}${_b64(digest)}"


class PasswordCheckNeeded(Exception):
    """A password check no cache of this process holds, raised instead of run where the
    caller asked for it (Context.password_checks_outside): the daemon's processor rolls
    the message back, runs the check outside its write lock and runs the message again,
    which finds the outcome kept."""

    def __init__(self, password: str, stored: str) -> None:
        super().__init__("a password check to run outside the transaction")
        self.password = password
        self.stored = stored

    def run(self) -> None:
        """Check the password; its outcome is kept for the next check of the pair."""
        verify_password(self.password, self.stored)


def _key(password: str, stored: str) -> bytes:
    return hmac.new(_cache_key, f"{stored}\0{password}".encode(), hashlib.sha256).digest()


def _kept(key: bytes) -> bool | None:
    for kept in (_verified, _refuted):
        if key in kept:
            kept.move_to_end(key)
            return kept is _verified
    return None


def kept_outcome(password: str, stored: str) -> bool | None:
    """Whether `password` matches `stored`, when this process has checked the pair and
    still keeps the outcome; None when only scrypt can tell."""
    return _kept(_key(password, stored))


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` matches `stored` (constant-time on the digest)."""
    key = _key(password, stored)
    known = _kept(key)
    if known is not None:
        return known
    try:
        scheme, log2_n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        actual = _scrypt(password, _unb64(salt), 2 ** int(log2_n), int(r), int(p))
    except (ValueError, TypeError):
        return False
    ok = hmac.compare_digest(actual, _unb64(digest))
    kept, size = (_verified, _CACHE_SIZE) if ok else (_refuted, _REFUTED_SIZE)
    kept[key] = None
    if len(kept) > size:
        kept.popitem(last=False)
    return ok
