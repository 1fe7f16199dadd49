"""The one exception hierarchy of reviewtrail.

Every error a caller can act on derives from :class:`ReviewtrailError` and carries
the documented process exit code the CLI uses for it (see README, "Exit codes").
"""

from __future__ import annotations

__all__ = [
    "EXIT_BACKEND",
    "EXIT_CONFLICT",
    "EXIT_INTEGRITY",
    "EXIT_INTERNAL",
    "EXIT_INVALID",
    "EXIT_NOT_FOUND",
    "EXIT_OK",
    "EXIT_RUN_FAILED",
    "BackendUnavailableError",
    "CanonicalJSONError",
    "ConfigError",
    "ConflictError",
    "CorruptObjectError",
    "IntegrityError",
    "InvalidAddressError",
    "InvalidInputError",
    "LedgerMissingError",
    "NotFoundError",
    "ObjectNotFoundError",
    "ReadOnlyStoreError",
    "ReviewtrailError",
    "StorageFullError",
    "StoreNotInitializedError",
    "kind_of",
]

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INVALID = 2
EXIT_NOT_FOUND = 3
EXIT_INTEGRITY = 4
EXIT_BACKEND = 5
EXIT_CONFLICT = 6
EXIT_RUN_FAILED = 7  # `reviewtrail run`: the sandboxed code failed or was cancelled (and was recorded)


class ReviewtrailError(Exception):
    """Base of every reviewtrail error."""

    exit_code: int = EXIT_INTERNAL

    def __init__(self, message: str, *, field: str | None = None) -> None:
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)


class InvalidInputError(ReviewtrailError, ValueError):
    """Input failed validation; ``field`` names what was wrong."""

    exit_code = EXIT_INVALID


class CanonicalJSONError(InvalidInputError):
    """A value has no RFC 8785 form (NaN, Infinity, lone surrogate, huge int...)."""


class InvalidAddressError(InvalidInputError):
    """A CAS address is not exactly 64 lowercase hex digits (or ``sha256:`` + that)."""


class NotFoundError(ReviewtrailError, LookupError):
    """Something asked for does not exist."""

    exit_code = EXIT_NOT_FOUND


class ObjectNotFoundError(NotFoundError):
    """No CAS object with this address (in the pools searched)."""


class IntegrityError(ReviewtrailError):
    """Stored bytes or records do not match their recorded hashes."""

    exit_code = EXIT_INTEGRITY


class CorruptObjectError(IntegrityError):
    """A CAS object's bytes do not hash to its address, or its size differs."""


class LedgerMissingError(IntegrityError):
    """The store's ledger is gone, emptied, unreadable or replaced by another one."""


class ConflictError(ReviewtrailError):
    """The operation conflicts with what is already recorded."""

    exit_code = EXIT_CONFLICT


class ConfigError(ReviewtrailError):
    """Configuration is missing or invalid."""

    exit_code = EXIT_BACKEND


class StoreNotInitializedError(ConfigError):
    """No reviewtrail store at the configured location."""


class BackendUnavailableError(ReviewtrailError):
    """A configured backend (database, object store) cannot be reached."""

    exit_code = EXIT_BACKEND


class StorageFullError(BackendUnavailableError):
    """The disk (or database) holding the store has no room left; nothing was half-written."""


class ReadOnlyStoreError(BackendUnavailableError):
    """The store was opened without write access, and the command writes."""


def kind_of(value: object) -> str:
    """What a value is, in JSON terms: ``a boolean``, ``an integer``, ``a string``..."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal number"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"
