"""What a new record and a sealed envelope share: record type names, privacy levels, ids.

Kept apart from the envelope so that the record to append (:mod:`reviewtrail.ledger.records._new_record`,
a msgspec model) and the envelope (plain functions) both use it.
"""

from __future__ import annotations

import os
import re
import time
from typing import Literal

__all__ = ["PRIVACY_LEVELS", "TYPE_PATTERN", "Privacy", "new_id"]

Privacy = Literal["public-source", "private", "sensitive"]
PRIVACY_LEVELS: tuple[Privacy, ...] = ("public-source", "private", "sensitive")
TYPE_PATTERN = re.compile(r"[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*@[1-9][0-9]{0,8}")


def new_id() -> str:
    """A time-ordered UUID (version 7 layout: 48-bit Unix milliseconds, then random bits).

    Ids sort roughly by creation time, which keeps database indexes local. Of ten random bytes
    ``r``, the 12 bits of ``rand_a`` are the first 12 and the 62 bits of ``rand_b`` the last 62.
    """
    ms = time.time_ns() // 1_000_000
    r = os.urandom(10)
    version_variant = bytes((0x70 | r[0] >> 4, (r[0] << 4 | r[1] >> 4) & 0xFF, 0x80 | r[2] & 0x3F))
    h = ((ms & 0xFFFF_FFFF_FFFF).to_bytes(6, "big") + version_variant + r[3:10]).hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
