"""Palette PNG files, written directly (PNG, W3C Recommendation / ISO/IEC 15948:2003).

A picture is one palette image with no transparency, which needs four chunks: IHDR
(size, 8 bits per pixel, colour type 3), PLTE (the palette), one IDAT (every row
after a filter byte of 0, deflated) and IEND. Written here rather than by Pillow so
that the deflate is zlib-ng's: at level 2 it takes less than half the time of the
zlib that Pillow is built with at its level 3, for fewer bytes
(`benchmarks/pictures.py`). Rows are not filtered, as Pillow does not filter palette
images either: a filter predicts neighbouring values, which palette indices are not.
"""

from __future__ import annotations

import struct

from zlib_ng import zlib_ng

SIGNATURE = b"\x89PNG\r\n\x1a\n"
# zlib-ng's level 2 (see the module's docstring; `benchmarks/pictures.py --compress-level`).
COMPRESS_LEVEL = 2
FILTER_NONE = 0  # a row's filter type: its bytes as they are


def _chunk(kind: bytes, data: bytes) -> bytes:
    """One chunk: its length, type, data and the CRC-32 of type and data."""
    crc = zlib_ng.crc32(data, zlib_ng.crc32(kind))
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def palette_png(rows: bytes, width: int, height: int, palette: bytes) -> bytes:
    """The PNG of a `width` x `height` image of palette indices, one byte each, given as
    its `rows`: each row is its filter byte (`FILTER_NONE`) and its `width` indices;
    `palette` is its colours as RGB triples (at most 256)."""
    assert len(rows) == (width + 1) * height and len(palette) % 3 == 0 and len(palette) <= 768
    assert rows[:: width + 1] == bytes([FILTER_NONE]) * height
    header = struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0)
    return b"".join(
        (
            SIGNATURE,
            _chunk(b"IHDR", header),
            _chunk(b"PLTE", palette),
            _chunk(b"IDAT", zlib_ng.compress(rows, COMPRESS_LEVEL)),
            _chunk(b"IEND", b""),
        )
    )
