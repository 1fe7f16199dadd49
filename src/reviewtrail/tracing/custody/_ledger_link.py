"""Recording traces in a reviewtrail store: bytes in the CAS, a ledger record.

The caller passes the open store, or a :class:`StoreLocator` that finds the store configured
for a project folder and opens it (:class:`reviewtrail.app.ProjectStores`, used by the command
line); nothing here reads settings or knows how a store is assembled.

A ``trace.review-call@1`` payload holds ``skill``, ``run_id``, ``trace_path``, ``meta`` (the
meta file's document), in full mode ``prompt`` and ``response`` (CAS references into the
``agent-state`` pool), and, in records written since file digests were added (all optional,
so older records stay valid):

- ``files``: ``{name: {"sha256": hex, "size": n}}`` of the exact bytes of every file the save
  wrote in the run folder (``run.meta.json`` only for the call that created the run);
- ``event``: ``{"sha256": hex, "size": n}`` of the call's ``events.jsonl`` line, without its newline;
- ``recovered``: ``true`` when ``repair_trace_links`` wrote the record for an interrupted save;
- ``save``: the save's token, the one its ``trace.save-begun@1`` record holds.

A save recorded in a store appends ``trace.save-begun@1`` (``save``, ``skill``, ``purpose``;
subject ``trace-save:<token>``) before it writes the call's first file: the ledger's evidence
that the save began, without which ``verify --repair`` records nothing (a pending marker in
``.aris`` alone is no evidence: anyone who can write ``.aris`` can write one).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from reviewtrail.tracing.catalog import SAVE_BEGUN_TYPE, TRACE_RECORD_TYPE

if TYPE_CHECKING:
    from reviewtrail.store import Store

__all__ = [
    "SAVE_TOKEN_PATTERN",
    "StoreLocator",
    "append_save_begun",
    "append_trace_record",
    "digest_doc",
    "save_subject",
    "store_present",
]

SAVE_TOKEN_PATTERN = r"^[0-9a-f]{32}$"  # noqa: S105 - a format, not a secret


class StoreLocator(Protocol):
    """Finds the store configured for a project folder, and opens it (the caller closes it)."""

    def exists(self, project: Path) -> bool: ...

    def open(self, project: Path) -> Store: ...


def store_present(store: Store | StoreLocator | None, project: Path) -> bool:
    """Whether a call saved in ``project`` will be recorded: an open store, or one the locator finds.

    A locator is asked first, without loading the store's code, so a save in a project without a
    store starts fast."""
    if store is None:
        return False
    exists = getattr(store, "exists", None)
    if callable(exists):  # a StoreLocator (an open Store has no ``exists``)
        return bool(exists(project))
    return True


def digest_doc(value: tuple[str, int]) -> dict[str, Any]:
    return {"sha256": value[0], "size": value[1]}


def append_trace_record(
    store: Store,
    *,
    skill: str,
    run_id: str,
    trace_path: str,
    prompt: str | None,
    response: bytes | None,
    meta: dict[str, Any],
    mode: str,
    actor: str,
    files: Mapping[str, tuple[str, int]] | None = None,
    event: tuple[str, int] | None = None,
    recovered: bool = False,
    save: str | None = None,
    origin: str | None = None,
) -> str:
    """Append one ``trace.review-call@1`` record to an open store; its id.

    In ``full`` mode the prompt and response bytes go to the ``agent-state`` pool and the
    record points at them; in ``meta`` mode only their hashes and lengths are recorded.
    """
    from reviewtrail.ledger import NewRecord

    payload: dict[str, Any] = {"skill": skill, "run_id": run_id, "trace_path": trace_path, "meta": meta}
    if mode == "full":
        if prompt is not None:
            payload["prompt"] = store.cas.put(
                prompt.encode("utf-8"), pool="agent-state", media_type="text/plain"
            ).to_json()
        if response is not None:
            payload["response"] = store.cas.put(response, pool="agent-state", media_type="text/markdown").to_json()
    if files is not None:
        payload["files"] = {name: digest_doc(files[name]) for name in sorted(files)}
    if event is not None:
        payload["event"] = digest_doc(event)
    if recovered:
        payload["recovered"] = True
    if save is not None:
        payload["save"] = save
    if origin is not None:
        payload["origin"] = origin
    record = NewRecord.make(
        type=TRACE_RECORD_TYPE,
        actor=actor,
        privacy="private",
        subject=f"trace:{skill}/{run_id}",
        payload=payload,
    )
    [env] = store.append([record])
    return env.id


def save_subject(save: str) -> str:
    """The subject of a save's ``trace.save-begun@1`` record (read back by subject)."""
    return f"trace-save:{save}"


def append_save_begun(store: Store, *, save: str, skill: str, purpose: str, actor: str) -> None:
    """Record that a save began (before its first file is written)."""
    from reviewtrail.ledger import NewRecord

    store.append(
        [
            NewRecord.make(
                type=SAVE_BEGUN_TYPE,
                actor=actor,
                privacy="private",
                subject=save_subject(save),
                payload={"save": save, "skill": skill, "purpose": purpose},
            )
        ]
    )
