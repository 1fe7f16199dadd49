"""The payload model of ``trace.review-call@1``: what :func:`append_trace_record` writes.

Every record trace recording has written validates: ``skill``, ``run_id``, ``trace_path`` and
``meta`` (the call's meta document, as written) always; ``prompt`` and ``response`` (CAS
references in the ``agent-state`` pool) in full mode; ``files``, ``event`` and ``recovered`` only
in records written since file digests were stored; ``save`` (the save's token, naming its
``trace.save-begun@1`` record) in records written since saves record that they began; ``origin``
(the id of the project folder that saved the call, :mod:`reviewtrail.tracing.files._origin`) in records
written since records name their folder. Names and
paths are not checked here: the trace reader (``trace_ledger_problems``) reports a record whose
skill or run id it cannot use.

The models are msgspec models (:mod:`reviewtrail._struct`): a save decodes its payloads with them
and loads no pydantic.
"""

# No ``from __future__ import annotations``: the fields' types are objects, which a decoder takes
# as they are (an annotation given as text is compiled when the decoder is built, at each save).
from typing import Annotated, Any

from msgspec import Meta

from reviewtrail._struct import Model, PayloadStruct
from reviewtrail.cas import HEX_PATTERN, CasRef
from reviewtrail.ledger import record_type
from reviewtrail.tracing.catalog import SAVE_BEGUN_TYPE, TRACE_RECORD_TYPE
from reviewtrail.tracing.custody._ledger_link import SAVE_TOKEN_PATTERN
from reviewtrail.tracing.files._origin import ORIGIN_PATTERN

__all__ = ["RECORD_TYPES", "FileDigest", "ReviewCallRecord", "SaveBegunRecord"]

Token = Annotated[str, Meta(pattern=SAVE_TOKEN_PATTERN)]


class FileDigest(Model, frozen=True):
    """``{"sha256": hex, "size": n}`` of the exact bytes of a file or event line."""

    sha256: Annotated[str, Meta(pattern=rf"^{HEX_PATTERN}$")]
    size: Annotated[int, Meta(ge=0)]


@record_type(TRACE_RECORD_TYPE)
class ReviewCallRecord(PayloadStruct, frozen=True):
    """One reviewer call saved in ``.aris/traces`` and recorded in the ledger."""

    skill: str
    run_id: str
    trace_path: str
    meta: dict[str, Any]
    prompt: CasRef | None = None
    response: CasRef | None = None
    files: dict[str, FileDigest] | None = None
    event: FileDigest | None = None
    recovered: bool | None = None
    save: Token | None = None
    origin: Annotated[str, Meta(pattern=ORIGIN_PATTERN)] | None = None


@record_type(SAVE_BEGUN_TYPE)
class SaveBegunRecord(PayloadStruct, frozen=True):
    """A trace save began: appended before the call's first file is written, so that
    ``verify --repair`` completes only saves the ledger saw begin (``save`` is the token of the
    save's pending marker and of the call's record)."""

    save: Token
    skill: str
    purpose: str


# What this package adds to the application's record catalog (see reviewtrail.app).
RECORD_TYPES: tuple[type[PayloadStruct], ...] = (ReviewCallRecord, SaveBegunRecord)
