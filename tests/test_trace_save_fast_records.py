"""The record to append is checked with plain Python (no pydantic when it is valid); the pydantic
model it replaced (``ledger/records/_new_record_model.py``, unchanged) still words every refusal. On
generated fields, ``NewRecord(...)`` and ``NewRecord.make(...)`` agree with the model: the same
values, or the same refusal (``ValidationError`` text, or ``InvalidInputError`` message and
field)."""

from __future__ import annotations

import pickle
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from reviewtrail.errors import InvalidInputError
from reviewtrail.ledger import NewRecord
from reviewtrail.ledger.records._new_record import FIELDS
from reviewtrail.ledger.records._new_record_model import NewRecord as Model


class Text(str):
    """A str subclass: pydantic gives back a plain str."""


TEXTS = st.one_of(
    st.sampled_from(["a@1", "cas.put@1", "trace.review-call@1", "x-y_z.w@123456789", "me", "codex", "trace:s/r"]),
    st.sampled_from(["", "A@1", "a@0", "a@1 ", "a", "@1", "a@1234567890", "tab\there", "nl\n", "del\x7f", "x" * 1024]),
    st.sampled_from(["x" * 1025, "é@1", "naïve", "\ud800", "ok\u2028"]),
    st.text(max_size=12),
    st.builds(Text, st.sampled_from(["a@1", "me", "private"])),
)
VALUES = st.one_of(
    TEXTS,
    st.sampled_from(["public-source", "private", "sensitive", "Private", "public"]),
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.just(b"a@1"),
    st.just(1.5),
    st.just(["a@1"]),
    st.just({"a": 1}),
)
TIMES = st.one_of(
    st.none(),
    st.just(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
    st.just(datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))),
    st.just(datetime(2026, 1, 2, 3, 4, 5)),  # naive: the model takes it (the ledger refuses it)
    st.sampled_from(["2026-01-02T03:04:05Z", "2026-01-02", "yesterday", ""]),
    st.integers(0, 2_000_000_000),
    st.just(1.5),
)


@st.composite
def record_fields(draw: st.DrawFn) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name in ("type", "actor", "privacy"):
        if draw(st.integers(0, 9)):  # mostly present
            fields[name] = draw(
                st.one_of(
                    st.just({"type": "a@1", "actor": "me", "privacy": "private"}[name]),
                    VALUES,
                )
            )
    if draw(st.booleans()):
        fields["payload"] = draw(st.one_of(st.just({"n": 1}), st.none(), st.just([1, "x"]), st.just(object())))
    for name in ("subject", "supersedes", "id"):
        if draw(st.integers(0, 2)) == 0:
            fields[name] = draw(VALUES)
    if draw(st.integers(0, 2)) == 0:
        fields["time"] = draw(TIMES)
    if draw(st.integers(0, 9)) == 0:
        fields[draw(st.sampled_from(["extra", "seq", "hash"]))] = draw(VALUES)
    return fields


def _values(record: Any) -> dict[str, Any]:
    return {name: getattr(record, name) for name in FIELDS}


def _outcome(make: Any, fields: dict[str, Any]) -> tuple[str, Any]:
    try:
        record = make(**fields)
    except ValidationError as exc:
        return "refused", str(exc)
    except InvalidInputError as exc:
        return "refused", (str(exc), exc.field)
    values = _values(record)
    if "id" not in fields:
        assert isinstance(values.pop("id"), str)
    return "made", {k: (type(v), v) for k, v in values.items() if k != "payload"} | {"payload": values["payload"]}


def _old_make(**fields: Any) -> Model:
    """``NewRecord.make`` as it was, on the model."""
    try:
        return Model(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "record"
        raise InvalidInputError(first["msg"], field=loc) from exc


@given(record_fields())
def test_a_record_is_made_or_refused_as_the_model_makes_or_refuses_it(fields: dict[str, Any]) -> None:
    assert _outcome(NewRecord, fields) == _outcome(Model, fields)
    assert _outcome(NewRecord.make, fields) == _outcome(_old_make, fields)


def test_a_valid_record_is_made_without_pydantic() -> None:
    code = (
        "import sys\n"
        "from datetime import datetime, UTC\n"
        "from reviewtrail.ledger import NewRecord\n"
        "r = NewRecord.make(type='trace.save-begun@1', actor='codex', privacy='private', subject='trace-save:x',"
        " payload={'save': 'x'})\n"
        "NewRecord(type='a@1', actor='me', privacy='sensitive', time=datetime.now(UTC), id='i', supersedes='s')\n"
        "assert 'pydantic' not in sys.modules, 'pydantic loaded'\n"
        "try:\n"
        "    NewRecord.make(type='A', actor='me', privacy='private')\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "InvalidInputError type: Value error, 'A' is not 'name@version' (e.g. 'cas.put@1')\n"


def test_a_record_is_frozen_compared_shown_and_pickled_as_the_model_was() -> None:
    when = datetime(2026, 1, 2, tzinfo=UTC)
    record = NewRecord(type="a@1", actor="me", privacy="private", payload={"n": 1}, id="i1", time=when)
    model = Model(type="a@1", actor="me", privacy="private", payload={"n": 1}, id="i1", time=when)
    assert repr(record) == repr(model)
    assert record == NewRecord(type="a@1", actor="me", privacy="private", payload={"n": 1}, id="i1", time=when)
    assert record != NewRecord(type="a@1", actor="me", privacy="private", payload={"n": 2}, id="i1", time=when)
    assert record.__dict__ == dict(model)  # sealing reads a record's fields from its __dict__
    assert pickle.loads(pickle.dumps(record)) == record
    with pytest.raises(AttributeError):
        record.actor = "other"
    bare = NewRecord.model_construct(type="a@1", actor="a\ud800", privacy="private", payload={}, id="x")
    assert (bare.actor, bare.subject, bare.time) == ("a\ud800", None, None)
