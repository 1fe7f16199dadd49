"""The ledger envelope and its hash chain: pure functions, no I/O.

Chain rule (documented in docs/architecture.md)::

    header      = {seq, id, type, time, actor, privacy, subject, supersedes,
                   payloadHash, prevHash}
    payloadHash = sha256(payload)            # payload is RFC 8785 bytes
    hash        = sha256(ascii(prevHash) || JCS(header))
    prevHash    = hash of record seq-1, or 64 zeros for seq 1
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import operator
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from reviewtrail._value import Value
from reviewtrail.canonical import canonical_flat, canonical_json, canonical_value, is_plain, loads_json
from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger.records._fields import PRIVACY_LEVELS, TYPE_PATTERN

if TYPE_CHECKING:
    # The record to append is a msgspec model, loaded only where records are made
    # (reviewtrail.ledger.records._new_record): reading and checking records never load it.
    from reviewtrail.cas import CasObjectRef, CasRef
    from reviewtrail.ledger.records._new_record import NewRecord

__all__ = [
    "GENESIS_HASH",
    "Envelope",
    "chain_problems",
    "compute_hash",
    "encode_payloads",
    "envelope_hash",
    "format_time",
    "header_of",
    "may_hold_refs",
    "seal",
    "seal_chain",
    "stored_problem",
]

GENESIS_HASH = "0" * 64
_SIZE_KEY = b'"size":'  # in the canonical bytes of every CAS reference (see may_hold_refs)


def format_time(moment: datetime) -> str:
    """RFC 3339 UTC with microseconds and a ``Z``."""
    if moment.tzinfo is None:
        raise InvalidInputError("must be timezone-aware", field="time")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_T = TypeVar("_T")


class _kept(Generic[_T]):
    """A property computed on its first read and kept in the envelope's ``__dict__``, which
    attribute lookup reads first from then on: :func:`functools.cached_property` without the
    lock it takes (one per class, in 3.11) on each first read. Two threads reading it at once
    may both compute it; each gets an equal value, and one is kept."""

    def __init__(self, compute: Callable[[Envelope], _T]) -> None:
        self.func = compute
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, env: None, owner: type | None = None) -> _kept[_T]: ...
    @overload
    def __get__(self, env: Envelope, owner: type | None = None) -> _T: ...
    def __get__(self, env: Envelope | None, owner: type | None = None) -> _T | _kept[_T]:
        if env is None:
            return self
        value = env.__dict__[self.name] = self.func(env)
        return value


class Envelope(Value):
    """A sealed ledger record. Python attributes are snake_case; :meth:`to_json` gives the wire names."""

    seq: int
    id: str
    type: str
    time: str
    actor: str
    privacy: str
    subject: str | None
    supersedes: str | None
    payload: bytes
    payload_hash: str
    prev_hash: str
    hash: str

    @_kept
    def payload_value(self) -> Any:
        """The payload parsed as JSON (parsed once, then cached)."""
        return loads_json(self.payload)

    @_kept
    def cas_refs(self) -> list[CasObjectRef | CasRef]:
        """The CAS references in the payload (found once, then cached); a malformed one raises
        :class:`InvalidInputError`. Canonical bytes with no ``"size":`` hold none."""
        if not may_hold_refs(self.payload):
            return []
        refs: list[CasObjectRef | CasRef] = _cas().refs_in(self.payload_value)
        return refs

    def payload_json(self) -> Any:
        return self.payload_value

    def to_json(self) -> dict[str, Any]:
        """The wire form: every envelope field, payload decoded as JSON."""
        doc = header_of(self)
        doc["payload"] = self.payload_json()
        doc["hash"] = self.hash
        return doc


@functools.cache
def _cas() -> Any:
    """The CAS package (its references), loaded by the first record that may hold one."""
    import reviewtrail.cas

    return reviewtrail.cas


def header_of(env: Envelope) -> dict[str, Any]:
    return {
        "seq": env.seq,
        "id": env.id,
        "type": env.type,
        "time": env.time,
        "actor": env.actor,
        "privacy": env.privacy,
        "subject": env.subject,
        "supersedes": env.supersedes,
        "payloadHash": env.payload_hash,
        "prevHash": env.prev_hash,
    }


def compute_hash(prev_hash: str, header: dict[str, Any]) -> str:
    return hashlib.sha256(prev_hash.encode("utf-8") + canonical_flat(header, field="envelope")).hexdigest()


# RFC 8785 writes a string as Python's C encoder does without ASCII escaping (quote, backslash and
# control characters escaped, \b \f \n \r \t short, others \u00xx lowercase).
_JSON_STR: Any = json.encoder.encode_basestring
_SAFE_SEQ = 2**53 - 1


def envelope_hash(env: Envelope) -> str | None:
    """The hash ``env``'s fields give (``compute_hash(env.prev_hash, header_of(env))``), or
    ``None`` when a field is of a type no sealed record has. The header's RFC 8785 form is written
    directly: its keys are fixed, already in order, and its values are strings, a seq and nulls
    (the string encoder refuses anything else, which then takes the general path)."""
    seq = env.seq
    if type(seq) is int and -_SAFE_SEQ <= seq <= _SAFE_SEQ:
        try:
            fields = (env.id, env.type, env.time, env.actor, env.privacy, env.subject, env.supersedes)
            return _header_hash(env.prev_hash, seq, *fields, env.payload_hash)
        except UnicodeEncodeError:  # a lone surrogate: no canonical form, so no record could have it
            return None
        except TypeError:  # a field that is not text (or null where null is allowed)
            pass
    try:
        return compute_hash(env.prev_hash, header_of(env))
    except (InvalidInputError, TypeError, AttributeError):
        return None


def _header_hash(
    prev_hash: str,
    seq: int,
    id_: str,
    type_: str,
    time: str,
    actor: str,
    privacy: str,
    subject: str | None,
    supersedes: str | None,
    payload_hash: str,
) -> str:
    """sha256(prevHash || JCS(header)) of header fields of the types a sealed record has."""
    s = _JSON_STR
    header = (
        f'{prev_hash}{{"actor":{s(actor)},"id":{s(id_)},"payloadHash":{s(payload_hash)},'
        f'"prevHash":{s(prev_hash)},"privacy":{s(privacy)},"seq":{seq},'
        f'"subject":{"null" if subject is None else s(subject)},'
        f'"supersedes":{"null" if supersedes is None else s(supersedes)},"time":{s(time)},"type":{s(type_)}}}'
    )
    return hashlib.sha256(header.encode("utf-8")).hexdigest()


def encode_payload(record: NewRecord) -> bytes:
    """Canonical payload bytes; malformed CAS references are rejected here."""
    return encode_payloads((record,))[0]


def encode_payloads(records: Iterable[NewRecord]) -> list[bytes]:
    """:func:`encode_payload` of each record in turn (a batch's payloads, in one loop)."""
    encode, plain = _PLAIN_ENCODE, _plain
    out: list[bytes] = []
    add = out.append
    for record in records:
        value = record.payload
        body = None
        if encode is not None and plain(value):
            # What canonical_json writes for a plain value, without building an encoder per call;
            # anything it would refuse (a lone surrogate, too deep a nesting) goes to it below.
            try:
                body = "".join(encode(value, 0)).encode("utf-8")
            except Exception:  # canonical_json raises the documented error
                body = None
        if body is None:
            body = canonical_json(value, field="payload")
        if body.find(_SIZE_KEY) != -1:  # may_hold_refs(body)
            from reviewtrail.cas import refs_in

            refs_in(value)
        add(body)
    return out


_SAFE_INT = 2**53 - 1


def _plain(value: Any) -> bool:
    """``canonical.is_plain(value)``, answered without its general walk for the usual payload:
    an object whose keys are text below U+D800 and whose values are text, booleans, null and safe
    integers."""
    if type(value) is not dict:
        return is_plain(value)
    for key, item in value.items():
        t = type(item)
        if not (t is str or item is None or t is bool or (t is int and -_SAFE_INT <= item <= _SAFE_INT)):
            return is_plain(value)  # a container (or anything else): the general walk decides
        if type(key) is not str or not (key.isascii() or max(key) < "\ud800"):
            return False
    return True


def _not_plain(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not a plain JSON value")


# RFC 8785 of a plain value (see reviewtrail.canonical) is sorted-key, separator-free JSON without
# ASCII escaping: the C encoder canonical_json uses, built once. No circular check is needed, as a
# plain value holds no container twice.
_C_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
_PLAIN_ENCODE: Any = (
    None if _C_ENCODER is None else _C_ENCODER(None, _not_plain, _JSON_STR, None, ":", ",", True, False, True)
)


def may_hold_refs(payload: bytes) -> bool:
    """False when canonical payload bytes cannot contain a CAS reference (every ref has a "size" key)."""
    # find, not ``in``: ``in`` on bytes first takes its operand as an integer (raising and
    # clearing a TypeError each time), at three times the cost of the search itself.
    return payload.find(_SIZE_KEY) != -1


def seal(
    record: NewRecord,
    *,
    seq: int,
    prev_hash: str,
    now: datetime,
    payload: bytes | None = None,
    now_text: str | None = None,
) -> Envelope:
    """Turn a new record into the envelope at ``seq`` after ``prev_hash`` (``now_text``: ``now``
    already formatted, so a batch formats its time once)."""
    body = encode_payload(record) if payload is None else payload
    time = format_time(record.time) if record.time is not None else (now_text or format_time(now))
    payload_hash = hashlib.sha256(body).hexdigest()
    # A NewRecord's fields are validated text; the header is hashed without checking types again.
    fields = (record.id, record.type, time, record.actor, record.privacy, record.subject, record.supersedes)
    try:
        sealed = _header_hash(prev_hash, seq, *fields, payload_hash)
    except UnicodeEncodeError:
        # A lone surrogate: the general encoder names what has no canonical form.
        names = ("id", "type", "time", "actor", "privacy", "subject", "supersedes")
        header = {**dict(zip(names, fields, strict=True)), "seq": seq, "payloadHash": payload_hash}
        compute_hash(prev_hash, {**header, "prevHash": prev_hash})
        raise
    env = object.__new__(Envelope)  # the frozen value, filled without per-field __setattr__
    env.__dict__.update(
        seq=seq,
        id=record.id,
        type=record.type,
        time=time,
        actor=record.actor,
        privacy=record.privacy,
        subject=record.subject,
        supersedes=record.supersedes,
        payload=body,
        payload_hash=payload_hash,
        prev_hash=prev_hash,
        hash=sealed,
    )
    return env


# What sealing reads of a record to append: from its ``__dict__`` (a model's field values, read
# in one call), or as attributes from a record that keeps its fields elsewhere.
_RECORD_NAMES = ("id", "type", "actor", "privacy", "subject", "supersedes", "time")
_RECORD_ITEMS = operator.itemgetter(*_RECORD_NAMES)
_RECORD_ATTRS = operator.attrgetter(*_RECORD_NAMES)
_SET = object.__setattr__


def seal_chain(
    records: Sequence[NewRecord],
    payloads: Sequence[bytes],
    *,
    seq: int,
    prev_hash: str,
    now: datetime,
    existing: Container[str] = frozenset(),
    columns: list[Any] | None = None,
) -> list[Envelope]:
    """The envelopes :func:`seal` gives ``records`` (with their canonical ``payloads``) one after
    another at ``seq + 1``, ``seq + 2``, ... after ``prev_hash``, byte for byte, at batch cost: the
    time is formatted and the recurring actor, type, privacy and time are escaped once per batch
    (each distinct combination once), and the header is written directly. A record's
    ``supersedes`` must name an id in ``existing`` or an earlier record of the batch. A record this
    path cannot seal is sealed by :func:`seal`, which raises its error.

    ``columns``, when given, is extended with each envelope's fields in ``rt_records`` column order
    (seq, id, type, time, actor, privacy, subject, supersedes, payload, payload_hash, prev_hash,
    hash), in the same pass: the parameters of a multi-row insert."""
    s = _JSON_STR
    sha256 = hashlib.sha256
    new = object.__new__
    set_dict = _SET
    kinds = set(map(type, records))
    by_dict = len(kinds) == 1 and set(_RECORD_NAMES) <= getattr(records[0], "__dict__", {}).keys()
    get: Callable[[Any], tuple[Any, ...]] = _RECORD_ITEMS if by_dict else _RECORD_ATTRS
    now_text = format_time(now)
    # (actor, type, privacy, time) -> the header's text around the id and around the seq, and the
    # time as stored: few combinations per batch.
    fixed: dict[tuple[Any, ...], tuple[str, str, str, str]] = {}
    first = seq
    earlier: dict[str, int] | None = None  # the batch's ids by position, made when a record supersedes
    out: list[Envelope] = []
    add = out.append
    prev_json = s(prev_hash)  # the head's hash as read; every later one is a hex digest
    extend = (lambda values: None) if columns is None else columns.extend
    for record, body in zip(records, payloads, strict=True):
        id_, type_, actor, privacy, subject, supersedes, when = get(record.__dict__ if by_dict else record)
        if supersedes is not None and supersedes not in existing:
            if earlier is None:
                earlier = {r.id: i for i, r in reversed(list(enumerate(records)))}
            position = seq - first  # this record's, in the batch
            if earlier.get(supersedes, position) >= position:
                raise InvalidInputError(f"no earlier record with id {supersedes!r}", field="supersedes")
        seq += 1
        try:
            key = (actor, type_, privacy, when)
            parts = fixed.get(key)
            if parts is None:
                time = now_text if when is None else format_time(when)
                parts = fixed[key] = (
                    f'{{"actor":{s(actor)},"id":',
                    f',"privacy":{s(privacy)},"seq":',
                    f',"time":{s(time)},"type":{s(type_)}}}',
                    time,
                )
            before_id, before_seq, after, time = parts
            payload_hash = sha256(body).hexdigest()
            header = (
                f'{prev_hash}{before_id}{s(id_)},"payloadHash":"{payload_hash}","prevHash":{prev_json}'
                f'{before_seq}{seq},"subject":{"null" if subject is None else s(subject)},'
                f'"supersedes":{"null" if supersedes is None else s(supersedes)}{after}'
            )
            sealed = sha256(header.encode("utf-8")).hexdigest()
        except Exception:  # seal names what has no canonical form (or seals it after all)
            env = seal(record, seq=seq, prev_hash=prev_hash, now=now, payload=body, now_text=now_text)
            values = env.__dict__
        else:
            values = {
                "seq": seq,
                "id": id_,
                "type": type_,
                "time": time,
                "actor": actor,
                "privacy": privacy,
                "subject": subject,
                "supersedes": supersedes,
                "payload": body,
                "payload_hash": payload_hash,
                "prev_hash": prev_hash,
                "hash": sealed,
            }
            env = new(Envelope)  # the frozen value, given its fields without per-field __setattr__
            set_dict(env, "__dict__", values)
        add(env)
        extend(values.values())
        prev_hash = values["hash"]
        prev_json = f'"{prev_hash}"'
    return out


# An envelope's fields in header order, read from its ``__dict__`` in one call.
_STORED = operator.itemgetter(
    "prev_hash", "seq", "id", "type", "time", "actor", "privacy", "subject", "supersedes", "payload_hash"
)


def stored_problem(env: Envelope) -> str | None:
    """What is wrong with one envelope's stored bytes on its own, or ``None``: the payload's
    SHA-256 against ``payloadHash``, the header's hash against ``hash``, a type and a privacy a
    writer could have sealed. This is the check of every read: the bytes that were hashed are
    the bytes that are stored, so nothing is re-encoded but the small flat header.

    A sound record (the usual one) is found sound in one pass over its fields; what it lacks is
    then named by the checks one by one."""
    payload = env.payload
    fields = _STORED(env.__dict__)
    kind, seq = fields[3], fields[1]
    if (
        type(payload) is bytes
        and hashlib.sha256(payload).hexdigest() == fields[9]
        and type(kind) is str
        and (kind in _SOUND_TYPES or _sound_type(kind))
        and fields[6] in PRIVACY_LEVELS
        and type(seq) is int
        and -_SAFE_SEQ <= seq <= _SAFE_SEQ
    ):
        try:
            if _header_hash(*fields) == env.hash:
                return None
        except (TypeError, UnicodeEncodeError):  # a field of a type no sealed record has
            pass
    return _stored_problem(env)


def _stored_problem(env: Envelope) -> str | None:
    where = f"ledger seq {env.seq} ({env.id})"
    if not isinstance(env.payload, bytes) or hashlib.sha256(env.payload).hexdigest() != env.payload_hash:
        return f"{where}: payload does not hash to payloadHash"
    if type(env.type) is not str or TYPE_PATTERN.fullmatch(env.type) is None:
        return f"{where}: type {env.type!r} is not 'name@version'"
    if env.privacy not in PRIVACY_LEVELS:
        return f"{where}: privacy {env.privacy!r} is not one of {', '.join(PRIVACY_LEVELS)}"
    if envelope_hash(env) != env.hash:
        return f"{where}: hash does not match the envelope"
    return None


def record_problems(env: Envelope) -> list[str]:
    """What is wrong with one envelope on its own (not its link to the previous one): the checks
    of :func:`stored_problem`, and whether the payload bytes are canonical JSON (``verify``).

    A canonical payload's parsed value is kept as ``env.payload_value``, so what reads the payload
    next (CAS references, query-table rows) does not parse it again."""
    payload = env.payload
    canonical, value = canonical_value(payload)
    if canonical and stored_problem(env) is None:  # a sound record (the usual one), found sound at once
        env.__dict__["payload_value"] = value  # what the kept property would parse, parsed once
        return []
    problems: list[str] = []
    if hashlib.sha256(payload).hexdigest() != env.payload_hash:
        problems.append("payload does not hash to payloadHash")
    if canonical:
        env.__dict__["payload_value"] = value
    else:
        try:
            parsed = loads_json(payload)
            canonical_json(parsed)
        except (ValueError, InvalidInputError):
            problems.append("payload is not valid JSON")
        else:
            problems.append("payload bytes are not canonical JSON")
            # Bytes in another form may write the "size" key otherwise: their references are
            # found in the parsed value, so verify still reports what they point at.
            env.__dict__["payload_value"] = parsed
            with contextlib.suppress(InvalidInputError, ValueError):  # a malformed one: the property says so
                env.__dict__["cas_refs"] = _cas().refs_in(parsed)
    if type(env.type) is not str or (env.type not in _SOUND_TYPES and not _sound_type(env.type)):
        problems.append(f"type {env.type!r} is not 'name@version'")
    if env.privacy not in PRIVACY_LEVELS:
        problems.append(f"privacy {env.privacy!r} is not one of {', '.join(PRIVACY_LEVELS)}")
    if envelope_hash(env) != env.hash:
        problems.append("hash does not match the envelope")
    return [f"ledger seq {env.seq} ({env.id}): {problem}" for problem in problems]


# Record types already found to be 'name@version' (bounded): most records repeat a few.
_SOUND_TYPES: set[str] = set()


def _sound_type(text: str) -> bool:
    if TYPE_PATTERN.fullmatch(text) is None:
        return False
    if len(_SOUND_TYPES) < 4096:
        _SOUND_TYPES.add(text)
    return True


def chain_problems(
    envelopes: Iterable[Envelope],
    *,
    after: tuple[int, str] | None = None,
    repeated_ids: Mapping[int, str] | None = None,
) -> Iterator[str]:
    """Every broken link, gap or altered record in an ordered run of envelopes from seq 1, or from
    the seq after ``after`` (the seq and hash of the record the run must link to).

    Ids used twice are found with a set of every id seen, unless ``repeated_ids`` gives them (by
    seq: each record whose id an earlier record holds), as a ledger can tell without such a set."""
    prev_hash = GENESIS_HASH if after is None else after[1]
    expected_seq = 1 if after is None else after[0] + 1
    seen_ids: set[str] = set()
    for env in envelopes:
        if env.seq != expected_seq:
            yield f"ledger: expected seq {expected_seq}, found {env.seq} (gap or reorder)"
        if env.prev_hash != prev_hash:
            yield f"ledger seq {env.seq} ({env.id}): prevHash does not match the hash of seq {env.seq - 1}"
        if repeated_ids is None:
            if env.id in seen_ids:
                yield f"ledger seq {env.seq}: id {env.id} used twice"
            seen_ids.add(env.id)
        elif env.seq in repeated_ids:
            yield f"ledger seq {env.seq}: id {repeated_ids[env.seq]} used twice"
        problems = record_problems(env)
        if problems:
            yield from problems
        prev_hash = env.hash
        expected_seq = env.seq + 1
