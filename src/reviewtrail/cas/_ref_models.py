"""The pydantic form of the CAS references, for the pydantic payload models not yet msgspec
models: such a model validates, serializes and describes (JSON Schema) a reference field with
these, and gets back the reference itself (:class:`reviewtrail.cas.CasRef`). Deleted with the
last pydantic payload model that holds a reference.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, field_validator
from pydantic_core import CoreSchema
from pydantic_core import core_schema as cs

from reviewtrail._strict import IS_INT
from reviewtrail.cas._address import DEFAULT_MEDIA_TYPE, Pool, check_hex, check_media_type, parse_digest

__all__ = ["CasObjectRef", "CasRef", "core_schema"]


class CasObjectRef(BaseModel):
    """``{hash, size}``: the untyped reference records store (docs/architecture.md, "Content-addressed store")."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    hash: str
    size: Annotated[int, Field(ge=0), IS_INT]

    @field_validator("hash")
    @classmethod
    def _hash(cls, v: str) -> str:
        return check_hex(v)


class CasRef(BaseModel):
    """``{pool, digest, size, mediaType}``: the typed reference."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    pool: Pool
    digest: str
    size: Annotated[int, Field(ge=0), IS_INT]
    media_type: str = Field(default=DEFAULT_MEDIA_TYPE, alias="mediaType")

    @field_validator("digest")
    @classmethod
    def _digest(cls, v: str) -> str:
        return parse_digest(v, field="digest")

    @field_validator("media_type")
    @classmethod
    def _media(cls, v: str) -> str:
        return check_media_type(v)


def core_schema(ref: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
    """A reference field of a pydantic model: checked and described by the pydantic form of
    ``ref`` (the msgspec reference class), which it is given back as."""
    model: type[BaseModel] = CasRef if ref.__name__ == "CasRef" else CasObjectRef

    def validate(value: Any, inner: cs.ValidatorFunctionWrapHandler) -> Any:
        if isinstance(value, ref):
            return value
        made = inner(value)
        return ref(**{name: getattr(made, name) for name in type(made).model_fields})

    def serialize(value: Any, inner: cs.SerializerFunctionWrapHandler) -> Any:
        if isinstance(value, ref):
            value = model.model_construct(**{name: getattr(value, name) for name in model.model_fields})
        return inner(value)

    return cs.no_info_wrap_validator_function(
        validate,
        handler.generate_schema(model),
        serialization=cs.wrap_serializer_function_ser_schema(serialize, schema=handler.generate_schema(model)),
    )
