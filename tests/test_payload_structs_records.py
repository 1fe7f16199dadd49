"""The store's, reviewer's, provenance, models' and evidence record payloads are msgspec models:
they refuse bad payloads naming the wire field and the problem in the words they always used, and
loading them loads no pydantic."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import msgspec
import pytest

from reviewtrail import app
from reviewtrail.errors import InvalidInputError

IDENTITY = "store.identity@1"


def refusal(type_: str, payload: Any) -> str:
    with pytest.raises(InvalidInputError) as info:
        app.catalog().validate(type_, payload)
    return str(info.value)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"storeId": "", "ledgerKind": "sqlite"}, "payload.storeId: String should have at least 1 character"),
        ({"storeId": "s" * 201, "ledgerKind": "sqlite"}, "payload.storeId: String should have at most 200 characters"),
        ({"storeId": "s", "ledgerKind": "mysql"},
         "payload.ledgerKind: String should match pattern '^(sqlite|postgresql|memory)$'"),
        ({"storeId": "s"}, "payload.ledgerKind: Field required"),
        ({"store_id": "s", "ledgerKind": "sqlite"}, "payload.store_id: Extra inputs are not permitted"),
        ({"storeId": 1, "ledgerKind": "sqlite"}, "payload.storeId: Input should be a valid string"),
    ],
)  # fmt: skip
def test_a_store_identity_refusal_names_the_wire_field(payload: dict[str, Any], message: str) -> None:
    assert refusal(IDENTITY, payload) == f"{message} (record type {IDENTITY})"


def test_a_store_identity_is_accepted_under_its_wire_names() -> None:
    app.catalog().validate(IDENTITY, {"storeId": "s", "ledgerKind": "postgresql"})


MODULES: dict[str, tuple[str, ...]] = {
    "reviewtrail.store.identity": ("StoreIdentity",),
}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_the_payload_models_are_msgspec_models_and_load_no_pydantic(module: str) -> None:
    names = MODULES[module]
    code = (
        f"import sys, msgspec, {module} as m\n"
        f"assert all(issubclass(getattr(m, n), msgspec.Struct) for n in {names!r}), 'not msgspec models'\n"
        "assert 'pydantic' not in sys.modules, 'pydantic loaded'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert msgspec.Struct  # the models are msgspec's
