"""In-memory CAS for tests and throwaway runs. Same contract, nothing durable."""

from __future__ import annotations

import hashlib
import io
import threading
from collections.abc import Iterator
from typing import BinaryIO

from reviewtrail.cas._address import Pool
from reviewtrail.cas._protocol import CasStore, Location
from reviewtrail.errors import CorruptObjectError

__all__ = ["MemoryCas"]


class MemoryCas(CasStore):
    """Objects in dictionaries, one per location (``legacy`` is read-only here too)."""

    def __init__(self) -> None:
        self._objects: dict[str, dict[str, bytes]] = {"data": {}, "agent-state": {}, "legacy": {}}
        self._lock = threading.Lock()

    def _open_raw(self, location: Location, hexdigest: str) -> BinaryIO | None:
        data = self._objects[location].get(hexdigest)
        return None if data is None else io.BytesIO(data)

    def _list(self, location: Location) -> Iterator[str]:
        yield from sorted(self._objects[location])

    def _publish(self, pool: Pool, blobs: list[tuple[str, bytes | str]]) -> None:
        with self._lock:
            target = self._objects[pool]
            for hexdigest, content in blobs:
                assert isinstance(content, bytes)
                existing = target.get(hexdigest)
                if existing is not None:
                    if hashlib.sha256(existing).hexdigest() != hexdigest:
                        raise CorruptObjectError(
                            f"existing object {pool}/sha256:{hexdigest} is corrupt; refusing to reuse it"
                        )
                    continue
                target[hexdigest] = content

    # Test hooks: stand-ins for what only a broken disk or an attacker does.
    def tamper(self, location: Location, hexdigest: str, data: bytes) -> None:
        """Replace stored bytes behind the contract's back (tests only)."""
        self._objects[location][hexdigest] = data
