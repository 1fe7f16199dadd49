"""Writer key files: the private key a writer signs its records with, the trusted public keys a
reader holds signatures against, and making a new key pair.

The private key (``REVIEWTRAIL_SIGNING_KEY``, or ``signing_key`` in the user's own configuration)
is PEM PKCS#8 Ed25519, as ``ledger checkpoint --key`` takes, and must be readable by its owner
only: a file that group or others may read or write is refused (exit 5) naming the file and its
mode. It is read on the first append of the process, never before and never into the store.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from reviewtrail.errors import ConfigError, ConflictError, InvalidInputError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from reviewtrail.ledger.keys._record_signature import RecordSigner

__all__ = ["SIGNING_KEY_FIELD", "FileSigner", "TrustedKeys", "load_trusted_keys", "new_signing_key"]

#: The field a refused signing key is reported under (the setting's name in the user's configuration).
SIGNING_KEY_FIELD = "signing_key"
_KEY_MOST = 64 * 1024
_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n.*?-----END \1-----", re.DOTALL)


class FileSigner:
    """The signer of a private key file, loaded (and checked) on first use, then kept."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._signer: RecordSigner | None = None

    def load(self) -> RecordSigner:
        """The signer; :class:`~reviewtrail.errors.ConfigError` (exit 5, field ``signing_key``)
        naming the file when it is missing, unreadable, not a regular file, readable or writable
        by group or others (its mode is named), or not an unencrypted Ed25519 PKCS#8 PEM key."""
        if self._signer is None:
            self._signer = _load(self.path)
        return self._signer

    def __repr__(self) -> str:
        return f"FileSigner({str(self.path)!r})"


def _load(path: Path) -> RecordSigner:
    from reviewtrail.ledger.keys._record_signature import RecordSigner

    where = SIGNING_KEY_FIELD
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the signing key ({exc.strerror or exc})", field=where) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path}: the signing key is not a regular file", field=where)
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077:
            raise ConfigError(
                f"{path}: mode {mode:04o} lets others read or change the signing key; it must be readable by "
                f"its owner only (chmod 600 {path})",
                field=where,
            )
        if info.st_size > _KEY_MOST:
            raise ConfigError(f"{path}: larger than {_KEY_MOST:,} bytes; not a signing key", field=where)
        data = os.read(fd, _KEY_MOST + 1)
    finally:
        os.close(fd)
    try:
        return RecordSigner.from_pem(data)
    except InvalidInputError as exc:
        detail = str(exc).removeprefix(f"{exc.field}: ") if exc.field else str(exc)
        raise ConfigError(f"{path}: the signing key {detail}", field=where) from None


class TrustedKeys(msgspec.Struct, frozen=True):
    """Public keys a reader trusts as writers, by key id (:func:`load_trusted_keys`)."""

    keys: dict[str, Ed25519PublicKey]
    source: str = ""

    def __contains__(self, key_id: object) -> bool:
        return key_id in self.keys

    def get(self, key_id: str) -> Ed25519PublicKey | None:
        return self.keys.get(key_id)

    @classmethod
    def of(cls, keys: list[Ed25519PublicKey], source: str = "") -> TrustedKeys:
        from reviewtrail.ledger.keys._ed25519 import public_key_id

        return cls({public_key_id(k): k for k in keys}, source)


def load_trusted_keys(path: Path | str, *, field: str = "trusted_keys") -> TrustedKeys:
    """The Ed25519 public keys in ``path``: one or more PEM public keys (``BEGIN PUBLIC KEY``
    blocks), concatenated. A missing or unreadable file, one holding no key, a block that is not an
    Ed25519 public key, or text outside the blocks is :class:`InvalidInputError` (exit 2) naming
    ``field`` and the file."""
    from reviewtrail.inputs import read_input
    from reviewtrail.ledger.keys._ed25519 import load_public_key

    data = read_input(path, "key", field=field)
    keys: list[Ed25519PublicKey] = []
    at = 0
    for number, block in enumerate(_PEM_BLOCK.finditer(data), start=1):
        if data[at : block.start()].strip():
            raise InvalidInputError(f"{path}: text before key {number} is not a PEM public key", field=field)
        at = block.end()
        if block.group(1) != b"PUBLIC KEY":
            raise InvalidInputError(
                f"{path}: key {number} is a {block.group(1).decode()} block, not a PUBLIC KEY", field=field
            )
        try:
            keys.append(load_public_key(block.group(0)))
        except InvalidInputError as exc:
            detail = str(exc).removeprefix(f"{exc.field}: ") if exc.field else str(exc)
            raise InvalidInputError(f"{path}: key {number} {detail}", field=field) from None
    if not keys:
        raise InvalidInputError(f"{path} holds no PEM public key (-----BEGIN PUBLIC KEY-----)", field=field)
    if data[at:].strip():
        raise InvalidInputError(f"{path}: text after the last key is not a PEM public key", field=field)
    return TrustedKeys.of(keys, str(path))


def new_signing_key(path: Path | str) -> tuple[str, Path]:
    """Write a new Ed25519 private key to ``path`` (PEM PKCS#8, mode 0600) and its public key to
    ``path.pub`` (PEM), each created, never replacing a file (an existing one is
    :class:`ConflictError`, exit 6, and nothing is written). Returns the key id and the public
    key's path."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

    from reviewtrail.ledger.keys._ed25519 import public_key_id

    target = Path(path)
    public = target.with_name(target.name + ".pub")
    for existing in (target, public):
        if os.path.lexists(existing):
            raise ConflictError(f"{existing} already exists; a key file is never replaced", field="file")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    public_pem = key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    _create(target, private_pem, 0o600)
    try:
        _create(public, public_pem, 0o644)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return public_key_id(key.public_key()), public


def _create(path: Path, data: bytes, mode: int) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    except FileExistsError:
        raise ConflictError(f"{path} already exists; a key file is never replaced", field="file") from None
    except OSError as exc:
        raise InvalidInputError(f"cannot write {path}: {exc.strerror or exc}", field="file") from None
    try:
        os.fchmod(fd, mode)  # whatever the umask
        os.write(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        path.unlink(missing_ok=True)
        raise
    os.close(fd)
