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

# A cache of a pure function of its arguments, like pbm's others (docs/architecture.md,
# "What a process keeps"): successful verifications, keyed by an HMAC of (stored hash, password)
# under a secret that lives only in this process, at most _CACHE_SIZE of them. A server
# checks the same passwords all day and scrypt is deliberately slow (about 100 ms at
# N=2**15), so without it a move by password could not reach benchmarks/process.py's
# floor of 150 moves/s per core. A changed password has a new hash, so its old entry
# can no longer match; a failed attempt is never cached.
_cache_key = os.urandom(32)
_verified: OrderedDict[bytes, None] = OrderedDict()


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


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` matches `stored` (constant-time on the digest)."""
    key = hmac.new(_cache_key, f"{stored}\0{password}".encode(), hashlib.sha256).digest()
    if key in _verified:
        _verified.move_to_end(key)
        return True
    try:
        scheme, log2_n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        actual = _scrypt(password, _unb64(salt), 2 ** int(log2_n), int(r), int(p))
    except (ValueError, TypeError):
        return False
    ok = hmac.compare_digest(actual, _unb64(digest))
    if ok:
        _verified[key] = None
        if len(_verified) > _CACHE_SIZE:
            _verified.popitem(last=False)
    return ok
