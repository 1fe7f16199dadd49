"""Ed25519 keys as reviewtrail reads them: private keys (PEM PKCS#8, unencrypted) that sign
checkpoints, exports and records, public keys (PEM, or one OpenSSH line) that check them, and the
key id every signature names (pure, no I/O)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from reviewtrail.errors import InvalidInputError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = ["load_private_key", "load_public_key", "public_key_id"]


def public_key_id(key: Ed25519PublicKey) -> str:
    """SHA-256 (hex) of the raw 32-byte public key: the ``keyId`` of its signatures."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return hashlib.sha256(key.public_bytes(Encoding.Raw, PublicFormat.Raw)).hexdigest()


def load_private_key(pem: bytes) -> Ed25519PrivateKey:
    """The Ed25519 private key of ``pem`` (PKCS#8, unencrypted); anything else is
    :class:`InvalidInputError` (field ``key``). Checkpoints and signed exports use it."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(pem, password=None)
    except TypeError as exc:
        raise InvalidInputError("is encrypted; give an unencrypted PKCS#8 PEM key", field="key") from exc
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise InvalidInputError("is not a PEM private key (PKCS#8)", field="key") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise InvalidInputError(f"is a {_kind(key)} key; reviewtrail signs with Ed25519 keys only", field="key")
    return key


def load_public_key(data: bytes) -> Ed25519PublicKey:
    """The Ed25519 public key of ``data`` (PEM, or one OpenSSH line); anything else is
    :class:`InvalidInputError` (field ``public_key``)."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key, load_ssh_public_key

    try:
        key = load_ssh_public_key(data) if data.lstrip().startswith(b"ssh-") else load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise InvalidInputError("is not a PEM (or OpenSSH) public key", field="public_key") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise InvalidInputError(f"is a {_kind(key)} key; reviewtrail signs with Ed25519 keys only", field="public_key")
    return key


def _kind(key: object) -> str:
    return type(key).__name__.removeprefix("_").replace("PrivateKey", "").replace("PublicKey", "") or "different"
