"""Strict scalars for payload models: a boolean is not an integer and an integer is not a boolean.

Pydantic's lax mode reads ``true`` as 1, ``1`` as ``True`` and ``"3"`` as 3; the types here take
only the JSON (or YAML) value of their own kind and name what was given instead
(``must be an integer, not a boolean``). They check the value before pydantic's own validation,
so constraints (``Field(ge=1)``) and the JSON Schema are unchanged, and a record written earlier
(JSON: its integers are integers and its booleans booleans) still validates.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

from reviewtrail.errors import kind_of

__all__ = ["IS_BOOL", "IS_FLOAT", "IS_INT", "StrictBool", "StrictFloat", "StrictInt"]


def _int(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise PydanticCustomError("strict_int", "must be an integer, not {kind}", {"kind": kind_of(value)})


def _bool(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    raise PydanticCustomError("strict_bool", "must be a boolean (true or false), not {kind}", {"kind": kind_of(value)})


def _float(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    raise PydanticCustomError("strict_float", "must be a number, not {kind}", {"kind": kind_of(value)})


#: The checks alone, to follow a type's constraints: ``Annotated[int, Field(ge=0), IS_INT]`` (so
#: the constraints stay in the JSON Schema as ``minimum``, ``maximum``...).
IS_INT = BeforeValidator(_int)
IS_BOOL = BeforeValidator(_bool)
IS_FLOAT = BeforeValidator(_float)

#: An integer: not a boolean, a string or a decimal number. Constraints go on the field
#: (``version: StrictInt = Field(ge=1)``), or before :data:`IS_INT` in an ``Annotated``.
StrictInt = Annotated[int, IS_INT]
#: ``true`` or ``false``: not 0 or 1, nor ``"yes"``.
StrictBool = Annotated[bool, IS_BOOL]
#: A number (an integer or a decimal number): not a boolean or a string.
StrictFloat = Annotated[float, IS_FLOAT]
