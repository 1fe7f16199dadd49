"""CAS references: the only form in which records point at bytes.

A reference is checked with plain Python when it is made, and found in a payload by shape
(:func:`refs_in`), without pydantic. A reference that is not plainly valid (or that pydantic
would convert: a ``str`` subclass, an ``IntEnum`` size) goes to the pydantic model of the same
name in :mod:`reviewtrail.cas._ref_models`, which refuses it with the message and the
``ValidationError`` references have always been refused with, or accepts it as pydantic would.
A payload model with a reference field validates, serializes and describes it (JSON Schema)
with that model, and gives back this class (``__get_pydantic_core_schema__``). The address
rules the references apply are in :mod:`reviewtrail.cas._address`.
``tests/test_trace_save_fast_refs.py`` checks that the plain checks and the models agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from reviewtrail.cas._address import (
    DEFAULT_MEDIA_TYPE,
    DIGEST_PREFIX,
    POOLS,
    Digest,
    Pool,
    check_media_type,
    is_digest,
    is_hex,
)
from reviewtrail.errors import InvalidInputError

if TYPE_CHECKING:
    from pydantic import BaseModel, GetCoreSchemaHandler
    from pydantic_core import CoreSchema
    from pydantic_core.core_schema import SerializerFunctionWrapHandler, ValidatorFunctionWrapHandler

__all__ = ["CasObjectRef", "CasRef", "refs_in"]

R = TypeVar("R", bound="_Ref")


def _size(value: object) -> bool:
    return type(value) is int and value >= 0


def _media_type(value: object) -> bool:
    if type(value) is not str:
        return False
    try:
        check_media_type(value)
    except InvalidInputError:
        return False
    return True


class _Ref:
    """What both references share: frozen, compared, hashed and shown by their field values (as
    the models were), and handed to their pydantic model wherever one is needed."""

    FIELDS: ClassVar[tuple[str, ...]]

    @classmethod
    def plain_values(cls, fields: Mapping[Any, Any]) -> dict[str, Any] | None:
        """The reference's values when the plain checks accept ``fields`` exactly as the model
        would (unchanged); None when the model must decide."""
        raise NotImplementedError

    @classmethod
    def _model(cls) -> type[BaseModel]:
        from reviewtrail.cas import _ref_models

        model: type[BaseModel] = getattr(_ref_models, cls.__name__)
        return model

    @classmethod
    def _made(cls: type[R], values: Mapping[str, Any]) -> R:
        ref = cls.__new__(cls)
        ref.__dict__.update({name: values[name] for name in cls.FIELDS})
        return ref

    @classmethod
    def _from_model(cls: type[R], model: BaseModel) -> R:
        return cls._made({name: getattr(model, name) for name in cls.FIELDS})

    @classmethod
    def _checked(cls: type[R], fields: Mapping[Any, Any]) -> R:
        """The reference of ``fields``: plainly, else by the model (its ``ValidationError``)."""
        values = cls.plain_values(fields) if type(fields) is dict else None
        if values is not None:
            return cls._made(values)
        return cls._from_model(cls._model().model_validate(fields))

    @classmethod
    def model_validate(cls: type[R], obj: Any) -> R:
        """A reference from its JSON object (either key for the media type), or itself."""
        if isinstance(obj, cls):
            return obj
        return cls._checked(obj)

    @classmethod
    def model_json_schema(cls, **options: Any) -> dict[str, Any]:
        return cls._model().model_json_schema(**options)

    def as_model(self) -> BaseModel:
        """The pydantic model of this reference (its values, not checked again)."""
        return self._model().model_construct(**self.__dict__)

    def model_dump(self, **options: Any) -> dict[str, Any]:
        return self.as_model().model_dump(**options)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """Inside a payload model: validated, serialized and described by the reference's model;
        a reference given as one is taken as it is (as a model instance was)."""
        from pydantic_core import core_schema

        model = cls._model()

        def validate(value: Any, inner: ValidatorFunctionWrapHandler) -> Any:
            if isinstance(value, cls):
                return value
            return cls._from_model(inner(value))

        def serialize(value: Any, inner: SerializerFunctionWrapHandler) -> Any:
            return inner(value.as_model() if isinstance(value, cls) else value)

        return core_schema.no_info_wrap_validator_function(
            validate,
            handler.generate_schema(model),
            serialization=core_schema.wrap_serializer_function_ser_schema(
                serialize, schema=handler.generate_schema(model)
            ),
        )

    def _values(self) -> tuple[Any, ...]:
        fields = self.__dict__
        return tuple(fields[name] for name in self.FIELDS)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: {name!r} cannot be set")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: {name!r} cannot be deleted")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, _Ref)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(self.FIELDS, self._values(), strict=True))
        return f"{type(self).__name__}({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self).__name__, dict(self.__dict__)))


def _rebuild(name: str, values: dict[str, Any]) -> _Ref:
    cls: type[_Ref] = CasRef if name == "CasRef" else CasObjectRef
    return cls._made(values)


class CasObjectRef(_Ref):
    """``{hash, size}``: the untyped reference records store (docs/architecture.md, "Content-addressed store")."""

    FIELDS = ("hash", "size")

    hash: str
    size: int

    if TYPE_CHECKING:

        def __init__(self, *, hash: str, size: int) -> None: ...

    else:

        def __init__(self, /, **fields: Any) -> None:
            values = self.plain_values(fields)
            if values is None:
                values = {n: getattr(self._model()(**fields), n) for n in self.FIELDS}
            self.__dict__.update(values)

    @classmethod
    def plain_values(cls, fields: Mapping[Any, Any]) -> dict[str, Any] | None:
        if fields.keys() != _OBJECT_KEYS:
            return None
        h, n = fields["hash"], fields["size"]
        if type(h) is not str or not is_hex(h) or not _size(n):
            return None
        return {"hash": h, "size": n}

    @property
    def digest(self) -> Digest:
        return Digest(DIGEST_PREFIX + self.hash)

    def to_json(self) -> dict[str, Any]:
        return {"hash": self.hash, "size": self.size}


class CasRef(_Ref):
    """``{pool, digest, size, mediaType}``: the typed reference (``media_type`` or ``mediaType``)."""

    FIELDS = ("pool", "digest", "size", "media_type")

    pool: Pool
    digest: str
    size: int
    media_type: str

    if TYPE_CHECKING:

        def __init__(self, *, pool: Pool, digest: str, size: int, media_type: str = DEFAULT_MEDIA_TYPE) -> None: ...

    else:

        def __init__(self, /, **fields: Any) -> None:
            values = self.plain_values(fields)
            if values is None:
                values = {n: getattr(self._model()(**fields), n) for n in self.FIELDS}
            self.__dict__.update(values)

    @classmethod
    def plain_values(cls, fields: Mapping[Any, Any]) -> dict[str, Any] | None:
        keys = fields.keys()
        if not (_TYPED_REQUIRED <= keys <= _TYPED_ACCEPTED) or len(keys & _MEDIA_KEYS) > 1:
            return None
        pool, digest, size = fields["pool"], fields["digest"], fields["size"]
        media = fields.get("mediaType", fields.get("media_type", DEFAULT_MEDIA_TYPE))
        if type(pool) is not str or pool not in POOLS or type(digest) is not str or not is_digest(digest):
            return None
        if not _size(size) or not _media_type(media):
            return None
        return {"pool": pool, "digest": digest, "size": size, "media_type": media}

    @property
    def hash(self) -> str:
        return self.digest[len(DIGEST_PREFIX) :]

    def object_ref(self) -> CasObjectRef:
        return CasObjectRef._made({"hash": self.hash, "size": self.size})

    def to_json(self) -> dict[str, Any]:
        return {"pool": self.pool, "digest": self.digest, "size": self.size, "mediaType": self.media_type}


_OBJECT_KEYS = frozenset({"hash", "size"})
_TYPED_KEYS = frozenset({"pool", "digest", "size", "mediaType"})
_TYPED_REQUIRED = frozenset({"pool", "digest", "size"})
_MEDIA_KEYS = frozenset({"media_type", "mediaType"})
_TYPED_ACCEPTED = _TYPED_REQUIRED | _MEDIA_KEYS
_LEAVES = frozenset({str, int, float, bool, type(None)})  # JSON values that hold nothing


def refs_in(value: Any) -> list[CasObjectRef | CasRef]:
    """Every CAS reference in a JSON value, found by shape.

    An object whose keys are exactly ``{hash, size}`` or exactly
    ``{pool, digest, size, mediaType}`` is a reference. A shape that matches but
    does not validate raises :class:`InvalidInputError`, so a malformed reference
    can never slip into the ledger unnoticed.
    """
    found: list[CasObjectRef | CasRef] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) in _LEAVES:
            continue
        if isinstance(item, dict):
            keys = item.keys()
            if keys == _OBJECT_KEYS:
                found.append(_validate_ref(CasObjectRef, item))
                continue
            if keys == _TYPED_KEYS:
                found.append(_validate_ref(CasRef, item))
                continue
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return found


# References already validated, by their exact values and types (refs are frozen, so a record that
# names an object others named gets the same one); bounded, so it never grows with a ledger. The
# two shapes' keys differ in length, so they never meet.
_VALIDATED: dict[tuple[Any, ...], CasObjectRef | CasRef] = {}
_VALIDATED_MAX = 4096


def _validate_ref(model: type[CasObjectRef] | type[CasRef], item: dict[str, Any]) -> CasObjectRef | CasRef:
    key: tuple[Any, ...] | None
    if model is CasObjectRef:
        h, n = item["hash"], item["size"]
        key = (h, n, type(h), type(n))
    else:
        p, d, n, m = item["pool"], item["digest"], item["size"], item["mediaType"]
        key = (p, d, n, m, type(p), type(d), type(n), type(m))
    try:
        found = _VALIDATED.get(key)
    except TypeError:  # an unhashable value: not a valid reference, validated to say why
        key, found = None, None
    if found is not None:
        return found
    values = model.plain_values(item)
    ref = model._made(values) if values is not None else _by_model(model, item)
    if key is not None:
        if len(_VALIDATED) >= _VALIDATED_MAX:
            _VALIDATED.clear()
        _VALIDATED[key] = ref
    return ref


def _by_model(model: type[CasObjectRef] | type[CasRef], item: dict[str, Any]) -> CasObjectRef | CasRef:
    """What the reference's pydantic model makes of ``item``; its refusal as :class:`InvalidInputError`."""
    from pydantic import ValidationError

    try:
        return model._from_model(model._model().model_validate(item))
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "ref"
        raise InvalidInputError(f"malformed CAS reference {item!r}: {first['msg']}", field=loc) from exc
