"""Writer keys as the chain declares them, and the rule each record's signature is held to (pure:
records in, problems out; no I/O).

Key records (``store`` namespace, so only reviewtrail's own commands write them):

- ``store.key.declared@1`` ``{alg: "ed25519", keyId, publicKey (raw 32 bytes, base64), name}``:
  the key may sign the records after this one (``keyId`` must be the SHA-256 of the key);
- ``store.key.revoked@1`` ``{keyId, reason}``: a record the key signs after this one is invalid.
  A revocation takes effect whoever wrote it (fail closed), and for good: a revoked key is never
  declared again;
- ``store.signatures.required@1`` ``{}``: from this record's own seq on, every record must carry
  a valid signature by a declared, unrevoked key. Only the earliest one counts; a later one
  cannot move the point back.

Rotation is a declaration of the new key, then the revocation of the old one.
"""

from __future__ import annotations

import hashlib
import math
from typing import TYPE_CHECKING, Any

from reviewtrail._value import Value

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from reviewtrail.ledger.keys._record_signature import RecordSignature
    from reviewtrail.ledger.keys._signing_keys import TrustedKeys

__all__ = [
    "KEY_DECLARED",
    "KEY_RECORD_TYPES",
    "KEY_REVOKED",
    "SIGNATURES_REQUIRED",
    "DeclaredKey",
    "KeyBook",
    "is_key_id",
]

KEY_DECLARED = "store.key.declared@1"
KEY_REVOKED = "store.key.revoked@1"
SIGNATURES_REQUIRED = "store.signatures.required@1"
KEY_RECORD_TYPES = (KEY_DECLARED, KEY_REVOKED, SIGNATURES_REQUIRED)
_HEX = frozenset("0123456789abcdef")


def is_key_id(value: object) -> bool:
    """Whether ``value`` has the form of a key id: 64 lowercase hex digits."""
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


class DeclaredKey(Value):
    """A writer key the chain declares: its id, the writer's name, the key, and where."""

    key_id: str
    name: str
    key: Ed25519PublicKey
    seq: int


class KeyBook:
    """The writer keys of a chain, built from its key records in seq order (:meth:`add`): the
    keys declared (the first declaration of each), the seq each was first revoked at, and the
    seq signatures are required from. Only the key records are kept, never the other records."""

    __slots__ = ("declared", "problems", "required_from", "requirements", "revoked", "unnamed_revocations")

    def __init__(
        self,
        declared: dict[str, DeclaredKey] | None = None,
        revoked: dict[str, int] | None = None,
        required_from: int | None = None,
        requirements: list[int] | None = None,
        problems: list[str] | None = None,
        unnamed_revocations: list[int] | None = None,
    ) -> None:
        self.declared: dict[str, DeclaredKey] = {} if declared is None else declared
        self.revoked: dict[str, int] = {} if revoked is None else revoked
        self.required_from = required_from
        #: The seqs of every ``store.signatures.required@1`` record, in order (few).
        self.requirements: list[int] = [] if requirements is None else requirements
        #: Key records that say nothing usable (a declaration whose key is not its id, a revocation
        #: naming no key): reported by verify.
        self.problems: list[str] = [] if problems is None else problems
        #: The seqs of revocations that name no key id: a gate fails closed on them (whose key they
        #: revoke cannot be told), and verify reports them.
        self.unnamed_revocations: list[int] = [] if unnamed_revocations is None else unnamed_revocations

    def copy(self) -> KeyBook:
        """A book that :meth:`add` can extend without changing this one."""
        return KeyBook(
            dict(self.declared),
            dict(self.revoked),
            self.required_from,
            list(self.requirements),
            list(self.problems),
            list(self.unnamed_revocations),
        )

    @property
    def empty(self) -> bool:
        """Whether the chain holds no key record at all: then no signature can break the rule
        but one naming no key id."""
        return not (self.declared or self.revoked or self.requirements or self.problems)

    def add(
        self, seq: int, type_: str, payload: Any, *, record_hash: str = "", signature: RecordSignature | None = None
    ) -> None:
        """Take the key record at ``seq`` (its type, parsed payload, hash and signature) into
        account; records are added in seq order. A declaration from the require point on counts
        only when a key declared before it validly signed it (verify reports it otherwise, and the
        records its key signs)."""
        where = f"ledger seq {seq} ({type_})"
        doc = payload if isinstance(payload, dict) else {}
        if type_ == SIGNATURES_REQUIRED:
            self.requirements.append(seq)
            if self.required_from is None:
                self.required_from = seq
        elif type_ == KEY_REVOKED:
            key_id = doc.get("keyId")
            if not is_key_id(key_id):
                self.problems.append(f"{where}: the revocation names no key id (64 lowercase hex digits)")
                self.unnamed_revocations.append(seq)
                return
            self.revoked.setdefault(str(key_id), seq)
        elif type_ == KEY_DECLARED:
            declared = _declared(seq, doc)
            if isinstance(declared, str):
                self.problems.append(f"{where}: {declared}; the key is not declared")
            elif declared.key_id in self.revoked:
                self.problems.append(
                    f"{where}: key {declared.key_id} was revoked at seq {self.revoked[declared.key_id]}"
                )
            elif self.required_from is not None and self.problem(seq, record_hash, signature) is not None:
                return  # written by no declared writer once signatures are required: declares nothing
            else:
                self.declared.setdefault(declared.key_id, declared)

    def revoked_at(self, key_id: str) -> float:
        """The seq ``key_id`` was revoked at (infinity: never)."""
        return self.revoked.get(key_id, math.inf)

    def key_for(self, key_id: str, seq: int) -> Ed25519PublicKey | None:
        """The declared key ``key_id`` if it was declared before ``seq``."""
        found = self.declared.get(key_id)
        return found.key if found is not None and found.seq < seq else None

    def trusted_from(self, trusted: TrustedKeys, signatures: dict[int, RecordSignature], hashes: dict[int, str]) -> int:
        """The seq of the earliest ``store.signatures.required@1`` record validly signed by one of
        ``trusted``'s keys (not revoked before it), from ``signatures`` and ``hashes`` of those
        records by seq; seq 1 when there is none (every record is then held to the trusted keys)."""
        from reviewtrail.ledger.keys._record_signature import signature_verifies

        for seq in self.requirements:
            signature = signatures.get(seq)
            if signature is None or seq not in hashes:
                continue
            key = trusted.get(signature.key_id)
            unrevoked = self.revoked_at(signature.key_id) >= seq
            if key is not None and unrevoked and signature_verifies(key, signature, hashes[seq]):
                return seq
        return 1

    def problem(
        self,
        seq: int,
        record_hash: str,
        signature: RecordSignature | None,
        *,
        trusted: TrustedKeys | None = None,
        trusted_from: int = 1,
    ) -> str | None:
        """What is wrong with the signature of the record at ``seq`` (its envelope hash
        ``record_hash``), or ``None``:

        - a signature that does not verify under the key it names (one the chain declares, at
          any seq, or one of ``trusted``), or that the key made after its revocation, always;
        - from the required seq on: no signature, or one by a key not declared before the record;
        - with ``trusted`` keys, from ``trusted_from`` on: no signature, or one by a key not among
          them."""
        if signature is not None:
            from reviewtrail.ledger.keys._record_signature import signature_verifies

            key_id = signature.key_id
            if not is_key_id(key_id):
                return "its signature names no key id (64 lowercase hex digits)"
            # Whoever may sign here, a key known to the reader shows whether the signature is valid.
            declared = self.declared.get(key_id)
            key = (trusted.get(key_id) if trusted is not None else None) or (declared.key if declared else None)
            if key is not None and not signature_verifies(key, signature, record_hash):
                return f"its signature by key {key_id} does not verify"
            revoked = self.revoked_at(key_id)
            if revoked < seq:
                return f"it is signed by key {key_id} after the key's revocation at seq {int(revoked)}"
        if trusted is not None and seq >= trusted_from:
            if signature is None:
                return "it is not signed, and the trusted keys must sign it"
            if signature.key_id not in trusted:
                return f"it is signed by key {signature.key_id}, which is not a trusted key"
        required = self.required_from
        if required is not None and seq >= required:
            if signature is None:
                return f"it is not signed, but signatures are required from seq {required}"
            if self.key_for(signature.key_id, seq) is None:
                return (
                    f"it is signed by key {signature.key_id}, which no record before it declares "
                    f"(signatures are required from seq {required})"
                )
        return None


def _declared(seq: int, doc: dict[str, Any]) -> DeclaredKey | str:
    """The key a declaration's payload declares, or why it declares none."""
    import base64
    import binascii

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    key_id, public, name = doc.get("keyId"), doc.get("publicKey"), doc.get("name")
    if doc.get("alg", "ed25519") != "ed25519":
        return f"the declared key's algorithm {doc.get('alg')!r} is not ed25519"
    if not is_key_id(key_id) or not isinstance(public, str):
        return "the declaration holds no key id and public key"
    try:
        raw = base64.b64decode(public, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 32:
        return "the declared public key is not the base64 of 32 bytes"
    if hashlib.sha256(raw).hexdigest() != key_id:
        return f"the declared public key's id is {hashlib.sha256(raw).hexdigest()}, not {key_id}"
    try:
        key = Ed25519PublicKey.from_public_bytes(raw)
    except ValueError:
        return "the declared public key is not an Ed25519 key"
    return DeclaredKey(key_id, name if isinstance(name, str) else "", key, seq)
