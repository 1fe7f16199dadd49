"""The pydantic models of the CAS references, kept to word a refusal and to describe the
references inside other payload models.

:class:`reviewtrail.cas.CasRef` and :class:`reviewtrail.cas.CasObjectRef` check their fields
with plain Python. A reference they cannot accept that way is given to the model of the same
name here, which refuses it with the message (and pydantic's ``ValidationError``) references
have always been refused with, or accepts it with pydantic's conversions. A payload model with
a reference field validates, serializes and describes it (JSON Schema) with these models.
Loaded only then: making, checking and finding valid references loads no pydantic.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reviewtrail._strict import IS_INT
from reviewtrail.cas._address import DEFAULT_MEDIA_TYPE, Pool, check_hex, check_media_type, parse_digest

__all__ = ["CasObjectRef", "CasRef"]


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
